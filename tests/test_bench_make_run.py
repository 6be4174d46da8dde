"""``benchmarks/bench_make_run.py``'s plumbing, without the run itself (minutes): the stages get the
environment ``make run`` gives them, and the reference is timed while the run goes."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("bench_make_run")


def test_the_stages_run_as_make_run_runs_them(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as many containers set it
    env = bench.run_env(Path("/clone"))
    assert "PYTHONDONTWRITEBYTECODE" not in env  # the Makefile unexports it: each stage compiles once
    assert env["OMP_WAIT_POLICY"] == "PASSIVE"
    assert env["PYTHONPATH"] == str(Path("/clone/src"))
    assert env["PATH"].split(":")[0] == str(Path(sys.executable).parent)


def test_the_reference_is_sampled_while_the_command_runs(bench: ModuleType, tmp_path: Path) -> None:
    calls: list[int] = []

    def sample() -> float:
        calls.append(1)
        return 0.5 + len(calls)

    script = "import time; time.sleep(0.6); print('done'); raise SystemExit(3)"
    proc, during = bench.run_sampling([sys.executable, "-c", script], tmp_path, {}, 0.05, sample)
    assert proc.returncode == 3 and proc.stdout.strip() == "done"  # its output and status kept
    assert during and during == [0.5 + k for k in range(1, len(calls) + 1)]  # each timing, in order
