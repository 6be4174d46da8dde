"""Benchmark: the audit of a wide bank (200 options an item) with the heuristic probe, end to end.

Run: ``python benchmarks/bench_wide_audit.py [--options 200] [--items 8]``. Generates the bank in a
temporary folder, audits it with ``longest`` (2N orders an item) with pandas' PerformanceWarning raised
as an error, and prints wall seconds, CPU seconds and peak memory. Before the agreement was computed
from marginals past N=16, this bank asked numpy for 119 GiB (items x N^3 joint cells for each of 2,000
bootstrap draws) and stopped with a MemoryError.
"""

from __future__ import annotations

import argparse
import csv
import random
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--options", type=int, default=200)
    parser.add_argument("--items", type=int, default=8)
    args = parser.parse_args()

    import pandas as pd
    from _report import result

    from blindmcq.auditing.audit import AUDIT_GROUPS, Mapping, run_audit
    from blindmcq.config.files import load_groups, load_model_file
    from blindmcq.config.schema import model_config

    n, rng = args.options, random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "wide.csv"
        with bank.open("w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(["question", *[f"o{i}" for i in range(n)], "answer"])
            words = "ab cd ef gh ij".split()
            for k in range(args.items):
                options = [
                    f"w{i} " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) for i in range(n)
                ]
                out.writerow([f"Q{k}?", *options, rng.randrange(n)])
        mapping = Mapping(options=[f"o{i}" for i in range(n)], key="answer", key_format="index")
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.PerformanceWarning)
            run_audit(
                bank, Path(tmp) / "out", mapping, model=model_config(load_model_file("longest")),
                configs=load_groups(AUDIT_GROUPS),
            )  # fmt: skip
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{args.items} items x {n} options, {2 * n * args.items} blind calls: {wall:.1f} s wall, "
          f"{cpu:.1f} CPU-s, peak {peak_gib:.2f} GiB, no PerformanceWarning")  # fmt: skip
    result(
        "wide-audit",
        f"{n} options: {wall:.0f} s, peak {peak_gib:.2f} GiB",
        "119 GiB asked before (MemoryError)",
        119 / peak_gib,
    )


if __name__ == "__main__":
    main()
