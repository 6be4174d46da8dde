"""``make bench``: every benchmark in a short setting, one line each: figure, limit or peer, ratio.

    python benchmarks/run_all.py [--only NAME ...] [--full]

Each benchmark runs in its own process (so its timings do not share a warm-up) and prints a summary line
(``benchmarks/_report.py``); its full output goes to ``results/bench/NAME.log``. Benchmarks over the full
inputs (``make data``) say they were skipped when ``data/`` and ``../shared/data`` lack them. Figures
are wall-clock on this machine: run on a quiet machine before quoting them (the README's Performance
table gives the command per row).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _report import PREFIX, full_input  # noqa: E402

# name: (script, short arguments, full arguments, full input it needs or None)
BENCHES: dict[str, tuple[str, list[str], list[str], str | None]] = {
    "local-model": ("bench_local_model.py", ["--items", "2", "--no-llama"], ["--items", "6"], None),
    "cloze": ("bench_cloze.py", ["--items", "4"], ["--items", "12"], None),
    "extraction": ("bench_extract.py", ["--pages", "40"], ["--pages", "300"], None),
    "layouts": ("bench_layouts.py", ["--items", "60"], ["--items", "200"], None),
    "bm25": ("bench_bm25.py", ["--sample", "20"], ["--sample", "50"], "ua-legislation/provisions.jsonl.xz"),
    "runner": ("bench_runner.py", ["--calls", "4000", "--slow-calls", "200"], [], None),
    "analysis": ("bench_analysis.py", ["--no-figures"], [], "ua-customs-exam/questions.json"),
    "md-matcher": ("bench_md_matcher.py", [], [], None),
    "hostile": ("bench_hostile.py", ["--skip-slow"], [], None),
    "habit-coverage": (
        "bench_habit_coverage.py",
        ["--banks", "200", "--resamples", "500"],
        ["--banks", "800", "--resamples", "1000"],
        None,
    ),
    "interval-coverage": ("bench_interval_coverage.py", ["--banks", "500"], [], None),
    "audit-scale": ("bench_audit_scale.py", ["--items", "20000"], [], None),
    "fluency": ("bench_fluency.py", ["--items", "4"], [], None),
    "release": ("bench_release.py", ["--items", "600", "--models", "3"], [], None),
    "wide-audit": ("bench_wide_audit.py", ["--options", "120", "--items", "4"], [], None),
    # a cold ``dvc repro`` of the default pipeline takes minutes: only under --full (BENCH_ARGS=--full)
    "make-run": ("bench_make_run.py", ["--skip"], [], None),
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHES), default=None)
    parser.add_argument("--full", action="store_true", help="the longer settings the README quotes")
    args = parser.parse_args()
    logs = ROOT / "results" / "bench"
    logs.mkdir(parents=True, exist_ok=True)
    failed = 0
    print(f"{'benchmark':<12} {'figure':<46} | {'limit or peer':<44} | ratio", flush=True)
    for name in args.only or list(BENCHES):
        script, short, full, needs = BENCHES[name]
        if needs and full_input(needs) is None:
            print(f"{name:<12} skipped: needs {needs} (make data)", flush=True)
            continue
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script), *(full if args.full else short)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        (logs / f"{name}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
        rows = [
            json.loads(line[len(PREFIX) :]) for line in proc.stdout.splitlines() if line.startswith(PREFIX)
        ]
        if proc.returncode or not rows:
            failed += 1
            why = f"exit {proc.returncode}" if proc.returncode else "no summary line"
            print(f"{name:<12} FAILED ({why}; see {logs / (name + '.log')})", flush=True)
            continue
        for row in rows:
            ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}x"
            note = f"  ({row['note']})" if row.get("note") else ""
            print(f"{name:<12} {row['figure']:<46} | {row['against']:<44} | {ratio}{note}", flush=True)
        print(f"{'':<12} [{time.perf_counter() - started:.0f} s]", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
