"""Every CSV the tool writes reaches a spreadsheet with its text as text: a cell starting with ``=``, ``+``,
``-``, ``@``, a tab or CR gets a leading ``'`` (one helper, ``atomic.csv_text``); numbers stay numbers."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.analysis.tables import Table, write_tables
from blindmcq.atomic import FORMULA_PREFIXES, csv_text, neutralise_cell
from blindmcq.datasets.items import Item
from blindmcq.tasks.rewrite import write_diff

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ['=HYPERLINK("http://x","A")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1", "-"]


@pytest.mark.parametrize("text", ATTACKS)
def test_a_formula_prefix_is_neutralised(text: str) -> None:
    assert neutralise_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["-0.25", "+0.017", "1e-3", "plain", "", "—", "'=already", -0.25, 3, None])
def test_numbers_and_plain_text_stay_as_they_are(value: object) -> None:
    assert neutralise_cell(value) == value


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_csv_text_neutralises_text_cells_and_leaves_numeric_columns() -> None:
    frame = pd.DataFrame({"label": ["-", "A", "=1+1"], "excess": [-0.25, 0.1, -1.0], "n": [1, -2, 3]})
    frame["scheme"] = pd.Series(["dash", "@x", "latin"], dtype="category")
    rows = _rows(csv_text(frame))
    assert rows[0] == ["label", "excess", "n", "scheme"]
    assert [r[0] for r in rows[1:]] == ["'-", "A", "'=1+1"]
    assert [r[1] for r in rows[1:]] == ["-0.25", "0.1", "-1"] and [r[2] for r in rows[1:]] == [
        "1",
        "-2",
        "3",
    ]
    assert [r[3] for r in rows[1:]] == ["dash", "'@x", "latin"]
    assert frame.loc[0, "label"] == "-"  # the caller's frame is not changed


def test_the_rewrite_diff_neutralises_option_texts(tmp_path: Path) -> None:
    item = Item(id="t-b-1", source="t", bank="b", number=1, question="Q?", key=0,
                options=("key", "=HYPERLINK(\"http://evil\")", "@cmd", "-"),
                meta={"rewrite": {"original_options": ["key", "+A1", "plain", "-5 units"],
                                  "status": {"1": "ok", "2": "ok", "3": "ok"},
                                  "changed": [1, 2, 3]}})  # fmt: skip
    write_diff([item], tmp_path)
    rows = _rows((tmp_path / "diff.csv").read_text(encoding="utf-8"))
    head = rows[0]
    original = [r[head.index("original")] for r in rows[1:]]
    rewritten = [r[head.index("rewritten")] for r in rows[1:]]
    assert original == ["'+A1", "plain", "'-5 units"]
    assert rewritten == ['\'=HYPERLINK("http://evil")', "'@cmd", "'-"]


def test_the_tables_csv_neutralises_text_and_keeps_numbers(tmp_path: Path) -> None:
    frame = pd.DataFrame({"model": ["=evil", "sonnet"], "labels": ["-", "latin"], "excess": [-0.031, 0.2]})
    table = Table(name="table4", title="Table 4", frame=frame, shown=frame.astype(str))
    write_tables(tmp_path, {"table4": table})
    rows = _rows((tmp_path / "table4.csv").read_text(encoding="utf-8"))
    assert rows[1:] == [["'=evil", "'-", "-0.031"], ["sonnet", "latin", "0.2"]]


def test_every_csv_of_the_tool_goes_through_the_one_helper() -> None:
    """No module but ``atomic.py`` renders CSV itself (``to_csv``, ``csv.writer``) or writes a workbook."""
    pattern = re.compile(r"\.to_csv\(|csv\.(writer|DictWriter)\(|to_excel\(|openpyxl\.Workbook\(|xlsxwriter")
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "src" / "blindmcq").rglob("*.py"))
        if path.name != "atomic.py" and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert set(FORMULA_PREFIXES) == {"=", "+", "-", "@", "\t", "\r"}
