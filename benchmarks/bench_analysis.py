"""Benchmark: a million simulated prediction rows -> gate, analysis, every table (and figures).

Run: ``python benchmarks/bench_analysis.py [--threads 2] [--no-figures]``. Prints seconds
per step. The rows are simulated over the real customs bank (tests/analysis/simulate.py, 2,950 items):
18 models, each blind over 8 orders + 4 forced placements and full on the published order; two of them
also under two phrasings x two label schemes, two under two reasoning modes: 997,050 rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "analysis")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2, help="BLAS/Arrow threads (the target is 2 cores)")
    parser.add_argument("--no-figures", action="store_true")
    parser.add_argument(
        "--bank", type=Path, default=None, help="customs questions.json (default: data/, ../shared/data)"
    )
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import pandas as pd
    import pyarrow as pa
    from _report import full_input, result  # run as a script: benchmarks/ is on sys.path
    from simulate import customs_items, sim_panel, simulate

    from blindmcq.analysis import (
        analyze,
        build_tables,
        gate,
        headline_metrics,
        read_analysis_frame,
        write_tables,
    )
    from blindmcq.analysis.figures import write_figures

    pa.set_cpu_count(args.threads)
    bank = args.bank or full_input("ua-customs-exam/questions.json")
    if bank is None:
        parser.error("no customs bank: `make data`, or --bank questions.json")
    items = customs_items(bank)
    models = sim_panel(18)
    t0 = time.perf_counter()
    df = pd.concat(
        [
            simulate(items, models[:14], seed=0),
            simulate(
                items, models[14:16], seed=1, phrasings=("original", "minimal"), labels=("latin", "cyrillic")
            ),
            simulate(items, models[16:], seed=2, reasoning=("direct", "step_by_step")),
        ],
        ignore_index=True,
    )
    print(f"simulated {len(df):,} rows, {df['item_id'].nunique():,} items: {time.perf_counter() - t0:.1f} s")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "predictions.parquet"
        df.to_parquet(path, index=False)
        del df
        steps: dict[str, tuple[float, float]] = {}
        t, c = time.perf_counter(), time.process_time()
        preds = read_analysis_frame(path)
        steps["read + prepare parquet"] = (time.perf_counter() - t, time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        g = gate(preds, gate_model="m03", k=5)
        steps["gate"] = (time.perf_counter() - t, time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        a = analyze(preds, gate=g, sample_sizes=[400], seed=0)
        steps["analyze"] = (time.perf_counter() - t, time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        tables = build_tables(a, items=items)
        paths = write_tables(Path(tmp) / "report", tables)
        metrics = headline_metrics(a)
        steps["tables + metrics"] = (time.perf_counter() - t, time.process_time() - c)
        if not args.no_figures:
            t, c = time.perf_counter(), time.process_time()
            write_figures(Path(tmp) / "report", a, banks={"customs": items})
            steps["figures"] = (time.perf_counter() - t, time.process_time() - c)
        print(f"{'step':>24}  wall s   CPU s")
        for name, (sec, cpu) in steps.items():
            print(f"{name:>24}: {sec:6.2f}  {cpu:6.2f}")
        wall = sum(v[0] for k, v in steps.items() if k != "figures")
        cpu = sum(v[1] for k, v in steps.items() if k != "figures")
        print(
            f"{'rows to all tables':>24}: {wall:6.2f}  {cpu:6.2f} ({len(preds):,} rows, {len(paths)} files, "
            f"{len(metrics)} metrics)"
        )
        result(
            "analysis",
            f"{len(preds):,} rows to all tables in {wall:.1f} s ({cpu:.1f} CPU-s)",
            "budget 60 s for a million rows",
            60 / wall,
            f"load average {os.getloadavg()[0]:.1f}",
        )


if __name__ == "__main__":
    main()
