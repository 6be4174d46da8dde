"""Coverage of Table 4's habit and excess intervals on simulated banks built like real ones: the full grid.

Run: ``python benchmarks/bench_habit_coverage.py [--banks 1000] [--resamples 2000] [--threads 2]``
(minutes on 2 cores at the defaults). Every cell is ``--banks`` simulated 4-option banks
(``tests/analysis/coverage_sims.py``) through ``metrics.habit_intervals``, Table 4's own bounds, with
``--resamples`` bootstrap resamples (Table 4's 2,000 by default). Grid: keys balanced, .4/.3/.2/.1 and the
default bank's split; a habit toward the most- and the least-keyed slot and none; the model knows 0%,
30% or 90% of the items; 60 and 340 items; the published order (Table 4's design) and the 8 orders.
It prints one Markdown row a cell: the share of banks whose interval covers the true habit (Habit*)
and the true excess (Excess*), and the paper's Habit and Excess against what their definition converges
to. With 1,000 banks a coverage of 0.95 is measured within about 0.007 (one standard error).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "analysis")]
TARGET = 0.94


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--banks", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--items", type=int, nargs="*", default=[60, 340])
    parser.add_argument("--threads", type=int, default=2, help="BLAS threads (the target is 2 cores)")
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import numpy as np
    from _report import result  # run as a script: benchmarks/ is on sys.path
    from coverage_sims import DESIGNS, HABITS, KEY_SPLITS, habit_banks, habit_coverage, habit_truth

    from blindmcq.analysis import metrics

    started = time.perf_counter()
    print(f"{args.banks} banks a cell, {args.resamples} resamples; coverage of the true habit and excess")
    header = "| Design | Keys | Habit | Know | Items | True h | Habit* | Excess* | Habit (paper) | Excess (paper) |"  # noqa: E501
    print(header)
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    short = []
    for cell, (design, keys, habit, know, n_items) in enumerate(
        itertools.product(DESIGNS, KEY_SPLITS, HABITS, (0.0, 0.3, 0.9), args.items)
    ):
        rng = np.random.default_rng(cell)
        df = habit_banks(rng, args.banks, n_items, KEY_SPLITS[keys], habit, know, design)
        bounds = metrics.habit_intervals(df, 4, seed=cell, resamples=args.resamples)
        truth = habit_truth(KEY_SPLITS[keys], habit, know, design)
        cov = habit_coverage(bounds, truth)
        low = min(cov["habit_corrected"], cov["excess_corrected"])
        worst = min(worst, low)
        if low < TARGET:
            short.append((design, keys, habit, know, n_items, low))
        print(
            f"| {design} | {keys} | {habit} | {know:.1f} | {n_items} | {truth.habit:.3f} | "
            f"{cov['habit_corrected']:.3f} | {cov['excess_corrected']:.3f} | {cov['habit']:.3f} | "
            f"{cov['excess']:.3f} |",
            flush=True,
        )
    print(f"\ncells under {TARGET} (Habit* or Excess*): {len(short)}")
    for row in short:
        print("  ", *row)
    print(f"[{time.perf_counter() - started:.0f} s]")
    result(
        "habit-coverage",
        f"worst coverage of the true habit/excess {worst:.3f}",
        f"target {TARGET}",
        worst / TARGET,
        f"{len(short)} cells short",
    )


if __name__ == "__main__":
    main()
