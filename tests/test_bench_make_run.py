"""``benchmarks/bench_make_run.py``'s plumbing, without the run itself (minutes): the stages get the
environment ``make run`` gives them, the machine's other load is read, and the FLOP hook counts."""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
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


def test_other_processes_cpu_is_the_machines_busy_time_less_the_runs(bench: ModuleType) -> None:
    """The bench names the load beside the run from ``/proc/stat``, at no cost to the run: a busy loop
    here, in this process, is busy time of the machine."""
    before = bench.busy_seconds()
    if before is None:
        pytest.skip("no /proc/stat on this system: the bench prints the others' CPU as unknown")
    spin_until = time.process_time() + 0.3
    while time.process_time() < spin_until:
        pass
    assert bench.busy_seconds() - before >= 0.25


def test_the_flop_hook_counts_a_stages_linear_layers_and_leaves_their_arithmetic_alone(
    bench: ModuleType, tmp_path: Path
) -> None:
    """``--count-flops``: a process started with ``run_env(..., flop_log)`` counts 2 x rows x in x out per
    linear layer (a vocabulary-wide one as the output projection) and attention, still gets torch's own
    results, and ``flop_floor`` turns the log into reference units by stage."""
    log = tmp_path / "flops.jsonl"
    env = bench.run_env(tmp_path, log)
    assert env["PYTHONPATH"].split(":")[0] == str(bench.FLOP_HOOK)
    stage = tmp_path / "probe.py"
    stage.write_text(
        "import torch\n"
        "g = torch.Generator().manual_seed(0)\n"
        "x, w = torch.randn(3, 5, generator=g), torch.randn(7, 5, generator=g)\n"
        "layer = torch.nn.Linear(5, 7, bias=False)\n"
        "layer.weight.data = w\n"
        "assert torch.equal(layer(x), torch._C._nn.linear(x, w))\n"
        "assert torch.equal(torch.nn.functional.linear(input=x, weight=w), torch._C._nn.linear(x, w))\n"
        "head = torch.zeros(200_000, 4)\n"
        "torch.nn.functional.linear(torch.ones(2, 4), head)\n"
        "q = torch.randn(1, 2, 6, 8, generator=g)\n"
        "torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)\n",
        encoding="utf-8",
    )
    env.pop("PATH")  # this Python, by its path
    subprocess.run([sys.executable, str(stage)], env=env, check=True, cwd=tmp_path)
    units, lines = bench.flop_floor(log)
    linear, head, attention = 2 * (2 * 3 * 5 * 7), 2 * 2 * 200_000 * 4, 4 * 1 * 2 * 6 * 6 * 8
    assert units == pytest.approx((linear + head + attention) / bench.REFERENCE_FLOPS)
    assert lines.startswith("  probe: linear 0.00 TFLOP")
    assert bench.flop_floor(tmp_path / "none.jsonl") == (0.0, "")  # a run without a model counts nothing
