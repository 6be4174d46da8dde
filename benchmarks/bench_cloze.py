"""Cloze scoring speed: calls per second, one sequence per forward pass against batched (right-padded).

    python benchmarks/bench_cloze.py --threads 2 --items 12

One call = one item's options scored after one context (what the local backend does per request under
``scoring: cloze``). Items are the audit fixture's English LEXam questions (tests/fixtures/audit/),
scored blind (answer cue only) and full (question + cue). Both paths are timed on the same items,
interleaved per item so that load on a shared machine hits both alike, after one warm-up call each;
the largest difference between their log-likelihoods is printed too (the test bounds it at 1e-4).
The per-(context, option) memo that serves the 2N orders of an item is not used here.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from pathlib import Path

import yaml
from _report import result  # run as a script: benchmarks/ is on sys.path

from blindmcq.backends.local import LocalBackend
from blindmcq.config.schema import model_config

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "audit" / "lexam_en_80.csv"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    cfg = yaml.safe_load((ROOT / "conf" / "model" / "gemma3-270m.yaml").read_text(encoding="utf-8"))
    backend = LocalBackend(model_config({**cfg, "threads": args.threads, "scoring": "cloze"}))
    backend.load()
    with FIXTURE.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))[: args.items]
    calls = [
        (backend.cloze_context(question, "Answer:"), row[1:5]) for row in rows for question in (None, row[0])
    ]
    backend.score_options(*calls[0], batch_size=1)
    backend.score_options(*calls[0], batch_size=args.batch_size)
    spent = {"one by one": 0.0, "batched": 0.0}
    tokens, worst = [], 0.0
    for context, options in calls:
        started = time.perf_counter()
        one = backend.score_options(context, options, batch_size=1)
        spent["one by one"] += time.perf_counter() - started
        started = time.perf_counter()
        batched = backend.score_options(context, options, batch_size=args.batch_size)
        spent["batched"] += time.perf_counter() - started
        worst = max(worst, *(abs(a["logprob"] - b["logprob"]) for a, b in zip(one, batched, strict=True)))
        tokens.append(len(backend.encode_pair(context, " x")[0]))
    print(
        f"{len(calls)} calls ({len(rows)} items x blind/full, 4 options each), threads {args.threads}, "
        f"load average {os.getloadavg()[0]:.1f}, context tokens median {statistics.median(tokens):.0f}"
    )
    for name, seconds in spent.items():
        print(f"{name:>11}: {len(calls) / seconds:.3f} calls/s ({seconds / len(calls):.2f} s a call)")
    print(f"speed-up: {spent['one by one'] / spent['batched']:.2f}x; largest |difference|: {worst:.2e}")
    result(
        "cloze",
        f"batched {len(calls) / spent['batched']:.3f} calls/s, |diff| {worst:.1e}",
        f"one option at a time {len(calls) / spent['one by one']:.3f} calls/s",
        spent["one by one"] / spent["batched"],
        f"load average {os.getloadavg()[0]:.1f}",
    )


if __name__ == "__main__":
    main()
