"""Local-model speed on this machine: load times and scoring calls per second on real customs items.

    python benchmarks/bench_local_model.py --threads 2 --items 30          # cached load + calls/s
    python benchmarks/bench_local_model.py --threads 2 --first-load         # also time a fresh conversion

Prompts are built here in the paper's "original" framing (blind: options only; full: stem and
options) so that the benchmark does not depend on the presentation module; their length is what
matters for speed, and it is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.local import LocalBackend

ROOT = Path(__file__).resolve().parents[1]
CUSTOMS = Path("ua-customs-exam") / "questions.json"


def default_bank() -> Path:
    """The customs bank of the full inputs, where the tests look for it: ``$BLINDMCQ_SHARED_DATA``
    alone if set, else ``data/`` (``make data``), then ``../shared/data`` beside the checkout."""
    env = os.environ.get("BLINDMCQ_SHARED_DATA")
    folders = [Path(env)] if env else [ROOT / "data", ROOT.parent / "shared" / "data"]
    return next((f / CUSTOMS for f in folders if (f / CUSTOMS).is_file()), folders[0] / CUSTOMS)


LABELS = ("А", "Б", "В", "Г")
SYSTEM = "Ви складаєте іспит для вступу на державну службу в митних органах України."


def customs_items(path: Path, n: int, seed: int) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    items = [it for act in data["legislation"].values() for it in act]
    for comp in data["operational_competencies"].values():
        for level in comp["levels"].values():
            items.extend(level)
    return random.Random(seed).sample(items, n)


def prompt(item: dict, condition: str) -> str:
    options = "\n".join(f"{lab}. {a['text']}" for lab, a in zip(LABELS, item["answers"], strict=False))
    if condition == "blind":
        return f"Питання приховано. Оберіть правильний варіант лише за текстом варіантів.\n{options}"
    return f"{item['question']}\n{options}"


def time_calls(backend: LocalBackend, requests: list[ModelRequest]) -> tuple[float, float, float]:
    """(calls per second, median latency s, mean input tokens) over ``requests``, after one warm-up."""
    backend.complete(requests[0])
    started = time.perf_counter()
    responses = [backend.complete(r) for r in requests]
    elapsed = time.perf_counter() - started
    latencies = [r.latency_s or 0.0 for r in responses]
    return (
        len(requests) / elapsed,
        statistics.median(latencies),
        statistics.mean(r.input_tokens or 0 for r in responses),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bank", type=Path, default=default_bank())
    parser.add_argument("--first-load", action="store_true", help="also time a conversion into a fresh cache")
    parser.add_argument("--generate-tokens", type=int, default=16)
    args = parser.parse_args()

    cfg = yaml.safe_load((ROOT / "conf" / "model" / "gemma3-270m.yaml").read_text(encoding="utf-8"))
    cfg["threads"] = args.threads
    print(f"model {cfg['name']}, {args.threads} threads, {args.items} customs items (seed {args.seed})")

    if args.first_load:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = LocalBackend({**cfg, "cache_dir": tmp})
            fresh.load()
            print(f"first load (GGUF -> float32, saved to cache): {fresh.load_seconds:.1f} s")
            del fresh

    backend = LocalBackend(cfg)
    backend.load()
    print(f"load from {backend.loaded_from}: {backend.load_seconds:.1f} s  ({backend.cache_dir})")

    items = customs_items(args.bank, args.items, args.seed)
    for condition in ("blind", "full"):
        requests = [
            ModelRequest(model=cfg["name"], system=SYSTEM, user=prompt(it, condition), choices=LABELS)
            for it in items
        ]
        rate, median, tokens = time_calls(backend, requests)
        ms = median * 1000
        print(f"score {condition:5s}: {rate:5.2f} calls/s, median {ms:5.0f} ms, {tokens:5.0f} input tokens")
    gen = [
        ModelRequest(
            model=cfg["name"], system=SYSTEM, user=prompt(it, "blind"), max_tokens=args.generate_tokens
        )
        for it in items[: max(3, args.items // 5)]
    ]
    rate, median, _ = time_calls(backend, gen)
    print(f"generate {args.generate_tokens} tokens: {rate:5.2f} calls/s, median {median * 1000:5.0f} ms")


if __name__ == "__main__":
    main()
