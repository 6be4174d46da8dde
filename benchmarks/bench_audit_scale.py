"""Benchmark: ``blindmcq audit --surface-only`` of a generated JSON Lines bank of 100k or 1M items.

Run: ``python benchmarks/bench_audit_scale.py [--items 100000] [--words uk|en]``. Writes a four-option
bank (options of 2-12 random words, a 0-based key) to a temporary folder: Ukrainian words (``uk``, the
default: lexical search over the statutes runs, the costlier audit) or English ones (``en``: it is skipped,
the statutes being Ukrainian), audits it surface-only in a child process and
prints the child's wall seconds, CPU seconds and peak RSS (``ru_maxrss`` of the child alone, so the
bank's generation is not counted). The budget: 2 GiB at 1M items.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]
BUDGET_GIB = 2.0


WORDS = {
    "uk": "митний кодекс статті закон орган служба контроль декларація товар особа строк день".split(),
    "en": "customs code article law body service control declaration goods person term day".split(),
}


def write_bank(path: Path, n: int, seed: int = 0, language: str = "uk") -> None:
    rng = random.Random(seed)
    words = WORDS[language]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            options = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 12))) for _ in range(4)]
            stem = f"{'Питання' if language == 'uk' else 'Question'} {i}?"
            record = {"question": stem, "options": options, "answer": rng.randrange(4)}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--words", choices=sorted(WORDS), default="uk")
    args = parser.parse_args()
    from _report import result

    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "bank.jsonl"
        write_bank(bank, args.items, language=args.words)
        command = [sys.executable, "-m", "blindmcq.cli", "audit", str(bank), "--options", "options",
                   "--key", "answer", "--key-format", "index", "--surface-only",
                   "--out", str(Path(tmp) / "a")]  # fmt: skip
        env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"audit failed (rc {done.returncode}): {done.stderr[-2000:]}")
        metrics = json.loads((Path(tmp) / "a" / "metrics.json").read_text(encoding="utf-8"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_gib = after.ru_maxrss / 2**20  # the largest child's peak (KiB on Linux)
    print(f"{args.items:,} items ({args.words} words): {wall:.1f} s wall, {cpu:.1f} CPU-s, "
          f"peak RSS {peak_gib:.2f} GiB "
          f"(table2/longest {metrics.get('table2/longest')})")  # fmt: skip
    result("audit-scale", f"{args.items:,} items: {wall:.0f} s, peak {peak_gib:.2f} GiB",
           f"budget {BUDGET_GIB} GiB", BUDGET_GIB / peak_gib)  # fmt: skip


if __name__ == "__main__":
    main()
