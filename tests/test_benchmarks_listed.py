"""Every benchmark script runs under ``make bench`` (benchmarks/run_all.py), so none rots unseen."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a script make bench cannot run on a clean checkout, and why
NOT_IN_MAKE_BENCH = {
    "bench_panel.py": "needs the default run's corpus and statute index and pays every panel call cold",
}


def _benches() -> dict[str, tuple]:
    tree = ast.parse((ROOT / "benchmarks" / "run_all.py").read_text(encoding="utf-8"))
    node = next(
        n for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "BENCHES"
    )
    return ast.literal_eval(node.value)


def test_every_benchmark_script_is_in_make_bench() -> None:
    scripts = {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}
    listed = {entry[0] for entry in _benches().values()}
    assert listed <= scripts, f"make bench names scripts that do not exist: {sorted(listed - scripts)}"
    missing = scripts - listed - set(NOT_IN_MAKE_BENCH)
    assert not missing, f"benchmarks make bench never runs: {sorted(missing)}"
    assert not (listed & set(NOT_IN_MAKE_BENCH)), "a script is both listed and excused"


def test_every_listed_benchmark_prints_the_summary_line() -> None:
    for script, *_ in _benches().values():
        text = (ROOT / "benchmarks" / script).read_text(encoding="utf-8")
        assert "result(" in text, f"{script} never calls _report.result: make bench would call it FAILED"
