"""The rewrite stage's fluency scoring, one sequence per forward pass (what the stage does) against the
same texts batched per item, with the real Gemma on the default run's rewritten items.

    python benchmarks/bench_fluency.py [--items N] [--threads T]

Reads ``results/interventions/rewrite/items.jsonl`` (written by ``make run``; each item keeps its
original options in ``meta.rewrite``) and scores, after the blind cloze context, the texts of
``tasks.rewrite.fluency_requests`` (the stage's, which it sends through the engine and the response
cache): each item's changed distractors before and after, and its key, here straight from the backend
and without the cache. Prints the wall seconds of both paths, how many grid-rounded ``per_token`` scores
differ between them, and whether the fluency figures (``analysis.interventions.fluency_change`` of each
path's rows) come out equal. Batching is only a candidate for the stage if no score moves: a moved score
can move a committed figure. (The stage pays this once: a rerun reads every score from the cache.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, result

ITEMS = ROOT / "results" / "interventions" / "rewrite" / "items.jsonl"


class _Batched:
    """A backend whose ``score_options`` ignores the caller's ``batch_size`` and uses ``size``."""

    def __init__(self, backend: Any, size: int | None) -> None:
        self.backend, self.size, self.seen = backend, size, []

    def cloze_context(self, question: str | None, cue: str) -> str:
        return self.backend.cloze_context(question, cue)

    def score_options(self, context: str, options: list[str], *, batch_size: int | None = None) -> Any:
        scores = self.backend.score_options(context, options, batch_size=self.size or len(options))
        self.seen += [s["per_token"] for s in scores]
        return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=None, help="only the first N rewritten items")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if not ITEMS.is_file():
        result("fluency", "skipped", "no rewrite outputs", None, f"{ITEMS} is absent: run `make run` first")
        return
    import pandas as pd

    from blindmcq.analysis.interventions import fluency_change
    from blindmcq.backends.local import LocalBackend
    from blindmcq.config.files import load_model_file
    from blindmcq.config.schema import model_config
    from blindmcq.tasks.rewrite import fluency_requests

    rows = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.items] if args.items else rows
    new = [SimpleNamespace(id=r["id"], options=r["options"], key=r["key"]) for r in rows]
    old = [
        SimpleNamespace(id=r["id"], options=r["meta"]["rewrite"]["original_options"], key=r["key"])
        for r in rows
    ]
    cue = "Відповідь:"
    texts: dict[str, list[dict[str, Any]]] = {}  # each item's rows, scored in one call per item
    for row, _ in fluency_requests(old, new, "gemma3-270m-cloze", cue):  # type: ignore[arg-type]
        texts.setdefault(row["item_id"], []).append(row)
    cfg = load_model_file("gemma3-270m-cloze")
    if args.threads:
        cfg["threads"] = args.threads
    backend = LocalBackend(model_config(cfg))
    backend.load()
    context = backend.cloze_context(None, cue)
    runs = {}
    for name, size in (("one at a time", 1), ("batched per item", None)):
        wrapped = _Batched(backend, size)
        started = time.perf_counter()
        scored = []
        for part in texts.values():
            scores = wrapped.score_options(context, [r["text"] for r in part])
            scored += [{**r, "per_token": s["per_token"]} for r, s in zip(part, scores, strict=True)]
        figures = fluency_change(pd.DataFrame(scored))
        runs[name] = (time.perf_counter() - started, figures, wrapped.seen)
        print(f"{name}: {runs[name][0]:.1f} s, {len(wrapped.seen)} sequences", flush=True)
    (t1, f1, s1), (tb, fb, sb) = runs.values()
    moved = sum(a != b for a, b in zip(s1, sb, strict=True))
    changed = sorted(k for k in f1 if f1[k] != fb.get(k))
    print(f"grid-rounded per_token scores that differ: {moved} of {len(s1)}")
    print(f"fluency figures that differ: {changed or 'none'}")
    result(
        "fluency", f"{t1 / tb:.2f}x faster batched", "one at a time", t1 / tb,
        f"{moved}/{len(s1)} scores and {len(changed)} figures differ; {len(rows)} items",
    )  # fmt: skip


if __name__ == "__main__":
    main()
