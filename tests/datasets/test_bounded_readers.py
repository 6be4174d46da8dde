"""The bank readers are bounded: XLSX is streamed a row at a time after its parts' sizes are checked,
JSON Lines a line at a time with a per-line cap, and every format stops past ``ReadLimits.max_rows``;
each limit is one line naming the file. The streamed XLSX reads as pandas' ``read_excel`` did."""

from __future__ import annotations

import json
import math
import struct
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from blindmcq.datasets.generic import ReadLimits, _rows, load_generic
from blindmcq.errors import InputError
from blindmcq.jsonl import jsonl_records


def workbook(path: Path, rows: list[list[Any]], *, at: dict[tuple[int, int], Any] | None = None) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    for (r, c), value in (at or {}).items():
        sheet.cell(row=r, column=c, value=value)
    book.save(path)
    return path


def without_dimension(path: Path) -> Path:
    """The same workbook with the sheet's <dimension> element removed (as some writers leave it out)."""
    out = path.with_name(f"nodim-{path.name}")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                start = data.index(b"<dimension")
                data = data[:start] + data[data.index(b"/>", start) + 2 :]
            dst.writestr(info.filename, data)
    return out


def plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def pandas_rows(path: Path, header: bool) -> list[tuple[str, dict[str, Any]]]:
    frame = pd.read_excel(
        path, sheet_name=0, dtype=object, keep_default_na=False, header=0 if header else None
    )
    frame.columns = [str(c) for c in frame.columns]
    return [(f"row {i}", {k: plain(v) for k, v in zip(frame.columns, values, strict=True)})
            for i, values in enumerate(frame.itertuples(index=False, name=None), start=1)]  # fmt: skip


def test_a_streamed_workbook_reads_as_pandas_read_it(tmp_path: Path) -> None:
    rows = [
        ["question", "A", "B", "answer", "", "answer"],  # a blank and a repeated header cell
        ["2+2?", "3", "4", 1, None, "x"],
        ["Capital?", "Paris", None, 0.0, "note", None],  # an empty option, a whole float key
        [None, None, None, None, None, None],  # a blank row between data rows
        ["Ratio?", 0.5, True, 2, None, None],
        [None],  # trailing blank rows
        [None],
    ]
    path = workbook(tmp_path / "bank.xlsx", rows, at={(2, 7): "=NA()"})
    for header in (True, False):
        streamed = [(w, {k: plain(v) for k, v in r.items()}) for w, r in _rows(path, "xlsx", header)]
        assert streamed == pandas_rows(path, header)


def long_cells(path: Path) -> Path:
    """A workbook whose sheet inflates to about 3 MB (100 cells of 30,000 characters, under Excel's 32,767
    a cell) from a file of a few kB."""
    rows = [["question", "A", "B", "answer"], *([f"{i}" + "q" * 30_000, "a", "b", 0] for i in range(100))]
    return workbook(path, rows)


def test_a_workbook_inflating_past_the_cap_is_refused_before_parsing(tmp_path: Path) -> None:
    path = long_cells(tmp_path / "bomb.xlsx")
    assert path.stat().st_size < 100_000  # the cells compress to almost nothing
    tracemalloc.start()
    with pytest.raises(InputError) as info:
        load_generic(path, limits=ReadLimits(max_xlsx_bytes=2**20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    message = str(info.value)
    assert str(path) in message and "\n" not in message and "ReadLimits.max_xlsx_bytes" in message
    assert "xl/worksheets/sheet1.xml" in message  # the part that inflates
    assert peak < 2**20  # refused from the zip directory, nothing inflated
    assert len(load_generic(path, question="question", option_columns=["A", "B"], key="answer")) == 100


def _declare_size(path: Path, member: str, size: int) -> None:
    """Rewrite the sizes a zip declares for ``member`` (local header and central directory) to ``size``."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    with zipfile.ZipFile(path) as archive:
        local = archive.getinfo(member).header_offset
    struct.pack_into("<I", data, local + 22, size)
    central = 0
    while True:  # the central directory entry naming the member
        central = data.index(b"PK\x01\x02", central)
        n = struct.unpack_from("<H", data, central + 28)[0]
        if bytes(data[central + 46 : central + 46 + n]) == name:
            struct.pack_into("<I", data, central + 24, size)
            break
        central += 4
    path.write_bytes(bytes(data))


def test_a_part_that_inflates_past_its_declared_size_is_one_line(tmp_path: Path) -> None:
    path = long_cells(tmp_path / "liar.xlsx")
    _declare_size(path, "xl/worksheets/sheet1.xml", 200)  # the directory says 200 bytes; it inflates to 3 MB
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("xl/worksheets/sheet1.xml").file_size == 200  # what the size check sees
    tracemalloc.start()
    with pytest.raises(InputError) as info:
        load_generic(path, limits=ReadLimits(max_xlsx_bytes=2**20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert peak < 2**20  # zipfile stopped at the declared 200 bytes: the 3 MB were never inflated


def test_more_rows_than_the_limit_stop_with_one_line(tmp_path: Path) -> None:
    rows = [["question", "A", "B", "answer"], *([f"q{i}?", "a", "b", 0] for i in range(30))]
    path = workbook(tmp_path / "long.xlsx", rows)
    limits = ReadLimits(max_rows=20)
    kwargs: dict[str, Any] = {"question": "question", "option_columns": ["A", "B"], "key": "answer"}
    with pytest.raises(InputError, match=r"declares 31 rows .*20 data rows") as info:
        load_generic(path, limits=limits, **kwargs)  # the sheet's dimension says so up front
    assert str(path) in str(info.value)
    with pytest.raises(InputError, match=r"more than 20 data rows \(sheet row 22\)"):
        load_generic(without_dimension(path), limits=limits, **kwargs)  # counted as they stream
    assert len(load_generic(path, limits=ReadLimits(max_rows=30), **kwargs)) == 30  # at the limit: read


def test_a_row_far_down_the_sheet_stops_at_the_limit_not_after_every_gap_row(tmp_path: Path) -> None:
    path = workbook(tmp_path / "gap.xlsx", [["question", "A", "B", "answer"], ["q?", "a", "b", 0]],
                    at={(900_000, 1): "far"})  # fmt: skip
    with pytest.raises(InputError, match="declares 900,000 rows"):
        load_generic(path, limits=ReadLimits(max_rows=100))
    with pytest.raises(InputError, match=r"more than 100 data rows \(sheet row 102\)"):
        load_generic(without_dimension(path), limits=ReadLimits(max_rows=100))


def test_a_jsonl_line_past_the_cap_is_one_line_and_read_no_further(tmp_path: Path) -> None:
    path = tmp_path / "bank.jsonl"
    ok = json.dumps({"question": "q?", "options": ["a", "b"], "key": 0})
    huge = json.dumps({"question": "x" * 5_000_000, "options": ["a", "b"], "key": 0})
    path.write_text(f"{ok}\n{huge}\n{ok}\n", encoding="utf-8")
    tracemalloc.start()
    with pytest.raises(InputError) as info:
        list(jsonl_records(path, max_line_bytes=2**16))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    message = str(info.value)
    assert str(path) in message and "line 2" in message and "65,536 bytes" in message and "\n" not in message
    assert peak < 2**20  # one capped line in memory, not the 5 MB one
    with pytest.raises(InputError, match="line 2"):
        load_generic(path, limits=ReadLimits(max_line_bytes=2**16))
    assert len(list(jsonl_records(path))) == 3  # under the default cap the long line reads


@pytest.mark.parametrize("ending", ["\n", ""])
def test_a_jsonl_line_exactly_at_the_cap_reads(tmp_path: Path, ending: str) -> None:
    line = json.dumps({"q": "x" * 100})
    path = tmp_path / "b.jsonl"
    path.write_text(f"{line}\n{line}{ending}", encoding="utf-8")
    assert [n for n, _ in jsonl_records(path, max_line_bytes=len(line))] == [1, 2]
    with pytest.raises(InputError, match="line 1"):
        list(jsonl_records(path, max_line_bytes=len(line) - 1))


def test_jsonl_rows_past_the_limit_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bank.jsonl"
    rows = [json.dumps({"question": f"q{i}?", "options": ["a", "b"], "key": 0}) for i in range(12)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"more than 10 data rows \(line 11\)"):
        load_generic(path, limits=ReadLimits(max_rows=10))
    assert len(load_generic(path, limits=ReadLimits(max_rows=12))) == 12
