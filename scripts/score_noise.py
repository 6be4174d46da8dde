"""How far the local model's raw scores move between float32 kernel paths, and what the grid does to them.

Another CPU cannot be reached from here, so two kernel paths of this one stand in for it: one thread
against two (other blocking of the matrix products) and batched against one by one (other shapes). Each
option's cloze log-likelihood (raw sum, before ``quantise_score``) of the first ``--items`` items of the
shipped bank, after the answer cue alone and after the first item's question, is computed each way;
printed: the differences, and how many scores land on another grid point at 2 to 5 decimals.
Loads Gemma 3 270M (minutes on a busy 2-core machine).

    PYTHONPATH=src python scripts/score_noise.py --items 6
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
    args = parser.parse_args()

    import torch
    import yaml

    from blindmcq.backends.local import LocalBackend

    cfg = yaml.safe_load((ROOT / "conf/model/gemma3-270m.yaml").read_text(encoding="utf-8"))
    lines = (ROOT / "releases/default/results/corpus/items.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines[: args.items]]
    backend = LocalBackend(cfg)
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


if __name__ == "__main__":
    main()
