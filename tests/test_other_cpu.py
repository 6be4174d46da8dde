"""The same predictions give the same bytes on a CPU whose floating-point sums differ in the last bits.

numpy picks its SIMD kernels (and OpenBLAS its core type) from the CPU at import; a sum over the same
array can then differ in the last bit, and a full-precision float written to a table changes its bytes
(this is how the committed tables once differed between two machines). The test emulates such a CPU by
switching the widest kernels off (``NPY_DISABLE_CPU_FEATURES``, ``OPENBLAS_CORETYPE``) in a subprocess
and turns the shipped release into every table, figure and metric on both sides."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NARROW = {"NPY_DISABLE_CPU_FEATURES": "AVX512_SPR AVX512_ICL X86_V4", "OPENBLAS_CORETYPE": "Haswell"}
COMPARED = ("metrics.json", "headline.json", "tables", "report.md")


def _report(out: Path, extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, **extra_env, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "blindmcq.cli", "report", "--from", str(REPO / "releases/default"),
         "--out", str(out), "-C", str(REPO)],
        capture_output=True, text=True, env=env, timeout=600, cwd=REPO,
    )  # fmt: skip


def _digests(root: Path) -> dict[str, str]:
    files = [p for name in COMPARED for p in [root / name, *(root / name).rglob("*")]]
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()
    }


def _simd_found() -> set[str]:
    from numpy._core._multiarray_umath import __cpu_features__

    return {name for name, on in __cpu_features__.items() if on}


def test_a_cpu_with_narrower_kernels_writes_the_same_bytes(tmp_path: Path, shipped_report) -> None:
    if not {"AVX512_SPR", "AVX512_ICL"} & _simd_found():
        pytest.skip("this CPU has no AVX-512 kernels to switch off: there is no narrower CPU to emulate")
    there = _report(tmp_path / "there", NARROW)  # "here" is the run's shared report, this CPU as it is
    assert shipped_report.returncode == 0, shipped_report.stderr[-2000:]
    assert there.returncode == 0, there.stderr[-2000:]
    ours, theirs = _digests(shipped_report.out), _digests(tmp_path / "there")
    assert ours and ours.keys() == theirs.keys()
    assert [name for name in ours if ours[name] != theirs[name]] == []
