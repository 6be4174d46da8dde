"""The mistakes a newcomer makes on the README's flows each end in one line that says what to do
instead (exit code 2), not a library's message."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from blindmcq.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def test_auditing_a_pdf_points_to_extract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from blindmcq.cli.audit import main

    pdf = tmp_path / "bank.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    assert main([str(pdf), "--out", str(tmp_path / "out"), "--surface-only"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"blindmcq extract {pdf} --out DIR" in err[0] and "items.jsonl" in err[0]
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_sweep_outside_the_repository_root_says_where_to_run_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "BLINDMCQ_CONF"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "blindmcq.sweep", "-m", "model=longest"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "run the sweep from the repository root" in lines[0], lines
    assert "BLINDMCQ_CONF" in lines[0] and "Primary config directory" not in done.stderr
    assert not list(tmp_path.iterdir())  # Hydra never started: no outputs/ or multirun/


def test_a_relative_store_from_a_subfolder_is_refused(tmp_path: Path) -> None:
    from blindmcq.reporting.tracking import check_store

    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "docs").mkdir()
    with pytest.raises(ConfigError, match=r"run from .*or give the store's absolute URI") as caught:
        check_store("sqlite:///mlruns/mlflow.db", cwd=tmp_path / "docs")
    assert f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}" in str(caught.value)
    assert not (tmp_path / "docs" / "mlruns").exists()
    check_store("sqlite:///mlruns/mlflow.db", cwd=tmp_path)  # the project root: its own store
    check_store(f"sqlite:///{tmp_path}/m.db", cwd=tmp_path / "docs")  # absolute: from anywhere
    check_store("sqlite:///mlruns/mlflow.db", cwd=tmp_path.parent)  # outside any project


def test_a_commands_warning_is_one_line_without_a_source_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindmcq.cli._fail import warnings_as_lines

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after the test
    warnings_as_lines("report")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("analysis.sample_sizes: no sample400 set", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err == "blindmcq report: note: analysis.sample_sizes: no sample400 set\n"
