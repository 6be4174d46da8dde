"""Coverage of the item-level intervals (Tables 3 and 8, the rewrite table, NonsenseQA): the full grid.

Run: ``python benchmarks/bench_interval_coverage.py [--banks 2000]`` (about a minute). Each cell is
``--banks`` simulated banks of item means (``tests/analysis/coverage_sims.py``): shares 0.05, 0.25, 0.5,
0.95; 0, 50 or 100% of the items answered the same in every call; items alike, Beta(2s, 2(1-s)) or
Beta(0.2s, 0.2(1-s)); 60 or 340 items; 4 or 8 calls an item. It prints one Markdown row a cell: the
coverage of ``stats.item_share_bounds`` (what Tables 3 and 8 use; the Rao-Scott ``clustered_proportion``
is the same interval when items have equal calls, checked in tests/analysis/test_coverage.py), its mean
width, and, for comparison, Wilson at the effective size without the pseudo-items (the interval before)
and its width.
With 2,000 banks a coverage of 0.95 is measured within about 0.005 (one standard error).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "analysis")]
TARGET = 0.94


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--banks", type=int, default=2000)
    args = parser.parse_args()

    import numpy as np
    from _report import result  # run as a script: benchmarks/ is on sys.path
    from coverage_sims import CONSISTENT, SHARES, SPREADS, item_means

    from blindmcq import stats

    def before(p: np.ndarray, sd: np.ndarray, m: int, calls: int) -> tuple[np.ndarray, np.ndarray]:
        """Wilson at p(1-p)/(sd^2/m), clipped to [m, calls], expanded quantile: the interval replaced."""
        var = sd**2 / m
        inside = (p > 0) & (p < 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            raw = np.where(inside & (var > 0), p * (1 - p) / var, np.where(inside, calls, m))
            n, z = np.clip(raw, m, calls), stats.expanded_quantile(m)
            centre = (p + z * z / (2 * n)) / (1 + z * z / n)
            half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return stats.contain(p, centre - half, centre + half)

    started = time.perf_counter()
    print(f"{args.banks} banks a cell")
    print("| Share | Consistent | Item spread | Items | Calls | Coverage | Width", end="")
    print(" | Before: coverage | Before: width |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst, worst_before, short, widths = 1.0, 1.0, [], []
    cells = itertools.product(SHARES, CONSISTENT, SPREADS, (60, 340), (4, 8))
    for cell, (share, consistent, spread, m, calls) in enumerate(cells):
        y = item_means(np.random.default_rng(cell), args.banks, share, consistent, spread, m, calls)
        p, sd = y.mean(axis=1), y.std(axis=1, ddof=1)
        lo, hi = stats.item_share_bounds(p, sd, np.full(p.size, m), np.full(p.size, m * calls))
        cover = float(np.mean((lo <= share) & (share <= hi)))
        b_lo, b_hi = before(p, sd, m, m * calls)
        cover_before = float(np.mean((b_lo <= share) & (share <= b_hi)))
        worst, worst_before = min(worst, cover), min(worst_before, cover_before)
        widths.append((float(np.mean(hi - lo)), float(np.mean(b_hi - b_lo))))
        if cover < TARGET:
            short.append((share, consistent, spread, m, calls, cover))
        print(
            f"| {share} | {consistent:.0%} | {spread} | {m} | {calls} | {cover:.3f} | "
            f"{float(np.mean(hi - lo)):.3f} | {cover_before:.3f} | {float(np.mean(b_hi - b_lo)):.3f} |",
            flush=True,
        )
    width, width_before = np.mean(widths, axis=0)
    print(f"\nworst coverage {worst:.3f} (before: {worst_before:.3f}); cells under {TARGET}: {len(short)}")
    print(f"mean width over the grid {width:.4f} (before: {width_before:.4f})")
    for row in short:
        print("  ", *row)
    print(f"[{time.perf_counter() - started:.0f} s]")
    result("interval-coverage", f"worst item-level coverage {worst:.3f}", f"target {TARGET}", worst / TARGET)


if __name__ == "__main__":
    main()
