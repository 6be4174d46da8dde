"""How far the local model's raw scores move between float32 kernel paths, and what the grid does to them.

Another CPU cannot be reached from here, so two kernel paths of this one stand in for it: one thread
against two (other blocking of the matrix products) and batched against one by one (other shapes). Each
option's cloze log-likelihood (raw sum, before ``quantise_score``) of the first ``--items`` items of the
shipped bank, after the answer cue alone and after the first item's question, is computed each way;
printed: the differences, and how many scores land on another grid point at 2 to 5 decimals.
With ``--fluency``: the rewrite stage's fluency figures (``analysis.interventions.fluency_change``'s
means of per-token scores, rounded to 4 decimals) from one run of raw scores, unrounded and on the grid
(needs ``corpus/items.jsonl`` and ``interventions/rewrite/items.jsonl`` of a run's ``--results`` folder).
Loads Gemma 3 270M (minutes on a busy 2-core machine).

    PYTHONPATH=src python scripts/score_noise.py --items 6
    PYTHONPATH=src python scripts/score_noise.py --fluency --results RUN/results
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6, help="items of the shipped bank (4 options each)")
    parser.add_argument("--fluency", action="store_true", help="the rewrite's fluency figures instead")
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="a run's results folder")
    args = parser.parse_args()
    if args.fluency:
        fluency(args.results)
        return

    import torch
    import yaml

    from blindmcq.backends.local import LocalBackend
    from blindmcq.config.schema import model_config

    cfg = yaml.safe_load((ROOT / "conf/model/gemma3-270m.yaml").read_text(encoding="utf-8"))
    lines = (ROOT / "releases/default/results/corpus/items.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines[: args.items]]
    backend = LocalBackend(model_config(cfg))
    backend.load()
    cue = "Відповідь:"
    contexts = [backend.cloze_context(None, cue), backend.cloze_context(items[0]["question"], cue)]
    pairs = [backend.encode_pair(c, " " + o) for c in contexts for it in items for o in it["options"]]
    runs = {}
    for threads, batch in ((2, 1), (1, 1), (2, 4)):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            if batch == 1:
                scores = [backend._continuation_logprob(c, d) for c, d in pairs]
            else:
                scores = []
                for start in range(0, len(pairs), batch):
                    scores += backend.batched_logprobs(pairs[start : start + batch])
        runs[(threads, batch)] = np.array(scores)
    base = runs[(2, 1)]
    tokens = np.mean([len(d) for _, d in pairs])
    print(f"{len(base)} scores from {base.min():.1f} to {base.max():.1f}, {tokens:.1f} tokens on average")
    for (threads, batch), other in runs.items():
        if (threads, batch) == (2, 1):
            continue
        d = np.abs(other - base)
        moved = {dec: int((np.round(base, dec) != np.round(other, dec)).sum()) for dec in (2, 3, 4, 5)}
        grid = ", ".join(f"{dec} decimals {n}" for dec, n in moved.items())
        print(
            f"{threads} thread(s), batch {batch} against 2 threads one by one: "
            f"median |d| {np.median(d):.2g}, "
            f"max {d.max():.2g} (relative {(d / np.abs(base)).max():.2g}); on another grid point: {grid}"
        )


def raw_scores(backend: object, context: str, options: list[str]) -> list[float]:
    """Summed log-probabilities, one sequence per pass, before any grid (as ``score_options`` sums them)."""
    import torch

    pairs = [backend.encode_pair(context, backend.delimiter + o) for o in options]  # type: ignore[attr-defined]
    with torch.inference_mode():
        return [backend._continuation_logprob(c, d) for c, d in pairs]  # type: ignore[attr-defined]


def fluency(results: Path) -> None:
    import pandas as pd
    import yaml

    from blindmcq.backends.base import quantise_score
    from blindmcq.backends.local import LocalBackend
    from blindmcq.config.schema import model_config
    from blindmcq.stats import item_sign_test

    def read(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    corpus = {d["id"]: d for d in read(results / "corpus/items.jsonl")}
    rewritten = read(results / "interventions/rewrite/items.jsonl")
    cfg = yaml.safe_load((ROOT / "conf/model/gemma3-270m.yaml").read_text(encoding="utf-8"))
    backend = LocalBackend(model_config(cfg))
    backend.load()
    context = backend.cloze_context(None, "Відповідь:")
    before, after, keys = [], [], []  # (raw sum, tokens)
    for new in rewritten:
        old = corpus[new["id"]]
        changed = [j for j, (a, b) in enumerate(zip(old["options"], new["options"], strict=True)) if a != b]
        if not changed:
            continue
        texts = [old["options"][j] for j in changed] + [new["options"][j] for j in changed]
        texts.append(old["options"][old["key"]])
        sums = raw_scores(backend, context, texts)
        n = [len(backend.encode_pair(context, backend.delimiter + t)[1]) for t in texts]
        per = [s / k for s, k in zip(sums, n, strict=True)]
        before += per[: len(changed)]
        after += per[len(changed) : 2 * len(changed)]
        keys.append(per[-1])
    for name, f in (("raw", float), ("on the grid", quantise_score)):
        b, a, k = (np.array([f(x) for x in xs]) for xs in (before, after, keys))
        test = item_sign_test(pd.Series(b), pd.Series(a))
        print(
            f"{name}: n {len(b)}, before {b.mean():.7f}, after {a.mean():.7f}, keys {k.mean():.7f} "
            f"(as the figures: {round(b.mean(), 4)}, {round(a.mean(), 4)}, {round(k.mean(), 4)}); "
            f"up {test.up}, down {test.down}, sign test p {test.p:.6f}"
        )


if __name__ == "__main__":
    main()
