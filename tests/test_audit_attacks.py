"""``blindmcq audit`` on a huge CSV cell, ``--gate-k 0`` and ``--out`` naming a file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from blindmcq.cli.audit import main
from blindmcq.datasets.generic import load_generic

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "audit" / "lexam_en_80.csv"


def _bank(path: Path, rows: int = 12, huge: int = 0) -> Path:
    with FIXTURE.open(encoding="utf-8", newline="") as fh:
        data = list(csv.reader(fh))[:rows]
    if huge:
        data[0][1] = "x" * huge  # one option of the first item: a 10 MB cell
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(data)
    return path


def test_a_10_mb_csv_cell_is_read_not_a_csv_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank = _bank(tmp_path / "big.csv", huge=10 * 2**20)
    items = load_generic(bank, source="t", header=False, question="0", option_columns=["1", "2", "3", "4"],
                         key="5", key_format="label")  # fmt: skip
    assert len(items[0].options[0]) == 10 * 2**20
    out = tmp_path / "out"
    code = main([str(bank), "--no-header", "--model", "longest", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert (out / "report.md").is_file()


@pytest.mark.parametrize("k", ["0", "-1", "9"])
def test_gate_k_out_of_range_is_refused_not_replaced(
    tmp_path: Path, k: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = _bank(tmp_path / "b.csv")
    code = main([str(bank), "--no-header", "--model", "longest", "--gate-k", k, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--gate-k" in err and k in err
    assert not (tmp_path / "o" / "report.md").exists()


def test_gate_k_is_used_as_given(tmp_path: Path) -> None:
    import json

    bank = _bank(tmp_path / "b.csv")
    out = tmp_path / "o"
    assert main([str(bank), "--no-header", "--model", "longest", "--gate-k", "1", "--out", str(out)]) == 0
    assert json.loads((out / "gate.json").read_text(encoding="utf-8"))["k"] == 1


@pytest.mark.parametrize("where", ["file", "below a file"])
def test_out_naming_a_file_is_one_line_exit_2(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = _bank(tmp_path / "b.csv")
    target = tmp_path / "existing.txt"
    target.write_text("keep me", encoding="utf-8")
    out = target if where == "file" else target / "sub"
    assert main([str(bank), "--no-header", "--model", "longest", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(out) in err and "Traceback" not in err
    assert target.read_text(encoding="utf-8") == "keep me"
