from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from blindmcq.answers.calllog import call_log_path
from blindmcq.answers.predictions import SCHEMA, read_predictions, read_table, write_predictions
from blindmcq.answers.records import PREDICTION_COLUMNS, PredictionRecord
from blindmcq.errors import InputError


def record(i: int, **over: object) -> PredictionRecord:
    fields = dict(
        item_id=f"vkks-2024-commercial-{i}",
        model="gemma3-270m",
        condition="blind",
        phrasing="original",
        labels="cyrillic",
        protocol="sl",
        reasoning="direct",
        order=[(i + s) % 4 for s in range(4)],
        order_id=f"rot{i % 4}",
        forced_slot=None,
        key_slot=i % 4,
        n_options=4,
        picked_slot=1,
        picked_option=(i + 1) % 4,
        correct=i % 4 == 1,
        parse_status="ok",
        raw_response="Відповідь: Б",
        input_tokens=120 + i,
        output_tokens=2,
        latency_s=0.5 + i / 10,
        region=None,
        request_hash=f"{i:064x}",
        time="2026-01-02T03:04:05.678+00:00",
        backend="local",
        cached=bool(i % 2),
        error=None,
        setting="",
    )
    fields.update(over)
    return PredictionRecord(**fields)


RECORDS = [
    record(0),
    record(1, forced_slot=2, order_id="forced2"),
    record(2, picked_slot=None, picked_option=None, parse_status="unparseable", raw_response="не знаю"),
    record(3, parse_status="error", error="ThrottlingException: slow", input_tokens=None, output_tokens=None,
           latency_s=None, raw_response="", picked_slot=None, picked_option=None, region="us-east-1"),
    record(4, key_slot=None, n_options=5, order=[4, 3, 2, 1, 0]),
]  # fmt: skip


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_round_trip_is_exact(tmp_path: Path, suffix: str) -> None:
    path = write_predictions(RECORDS, tmp_path / f"pred{suffix}")
    assert read_table(path).to_pylist() == [r.to_row() for r in RECORDS]
    frame = read_predictions(path)
    assert tuple(frame.columns) == PREDICTION_COLUMNS
    assert frame["order"].tolist()[4] == [4, 3, 2, 1, 0]
    assert frame["picked_slot"].dtype == "Int64" and frame["picked_slot"].isna().sum() == 2
    assert frame["correct"].dtype == "boolean" and frame["latency_s"].dtype == "float64"
    # a frame written back reads the same
    again = write_predictions(frame, tmp_path / f"again{suffix}")
    assert read_table(again).to_pylist() == [r.to_row() for r in RECORDS]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_what_varies_per_run_stays_out_of_the_hashed_file(tmp_path: Path, suffix: str) -> None:
    first = write_predictions(RECORDS, tmp_path / "results" / "a" / f"pred{suffix}").read_bytes()
    rerun = [replace(r, time="2030-01-01T00:00:00+00:00", latency_s=0.0, cached=True) for r in RECORDS]
    path = write_predictions(rerun, tmp_path / "results" / "a" / f"pred{suffix}")
    assert path.read_bytes() == first  # a rerun from the cache writes the same bytes
    assert call_log_path(path) == tmp_path / "results" / "calls" / "a" / "pred.parquet"
    log = pq.read_table(call_log_path(path)).to_pandas()
    assert log["cached"].all() and log["request_hash"].tolist() == [r.request_hash for r in RECORDS]
    # the log fills the volatile columns back
    assert read_table(path).to_pylist() == [r.to_row() for r in rerun]
    call_log_path(path).unlink()  # a file without its log reads with those columns empty
    assert call_log_path(tmp_path / "elsewhere" / "p.parquet") is None  # outside results/: every column
    frame = read_predictions(path)
    assert frame["time"].isna().all() and frame["cached"].isna().all()
    assert frame.drop(columns=["time", "latency_s", "cached"]).equals(
        read_predictions(write_predictions(rerun, tmp_path / f"b{suffix}")).drop(
            columns=["time", "latency_s", "cached"]
        )
    )


def test_parquet_types_are_fixed(tmp_path: Path) -> None:
    path = write_predictions(RECORDS, tmp_path / "p.parquet")
    assert pq.read_schema(path).remove_metadata() == SCHEMA
    assert pq.read_schema(path).field("order").type == pa.list_(pa.int64())


def test_jsonl_is_one_object_per_line_in_column_order(tmp_path: Path) -> None:
    path = write_predictions(RECORDS, tmp_path / "p.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(RECORDS)
    first = json.loads(lines[0])
    assert tuple(first) == (*PREDICTION_COLUMNS, "schema_version")  # the version key last
    assert "Відповідь" in lines[0]  # UTF-8, not \\u escapes
    assert json.loads(lines[3])["error"] == "ThrottlingException: slow"


def test_missing_parquet_column_names_file_and_column(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pylist([r.to_row() for r in RECORDS]).drop_columns(["request_hash"]), path)
    with pytest.raises(InputError, match=r"old\.parquet.*missing column 'request_hash'"):
        read_predictions(path)


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = json.dumps(RECORDS[0].to_row(), ensure_ascii=False)
    missing = {k: v for k, v in RECORDS[1].to_row().items() if k != "model"}
    path.write_text(f"{good}\n{json.dumps(missing)}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl, line 2: missing column 'model'"):
        read_predictions(path)
    path.write_text(f"{good}\n\n{good[:-5]}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3: not valid JSON"):
        read_predictions(path)
    wrong = {**RECORDS[1].to_row(), "picked_slot": "B"}
    path.write_text(f"{good}\n{json.dumps(wrong)}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: wrong value type"):
        read_predictions(path)


def test_not_parquet_and_wrong_column_type_are_input_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.parquet"
    junk.write_text("nope")
    with pytest.raises(InputError, match=r"junk\.parquet"):
        read_predictions(junk)
    rows = [{**r.to_row(), "correct": "maybe"} for r in RECORDS]
    typed = tmp_path / "typed.parquet"
    pq.write_table(pa.Table.from_pylist(rows), typed)
    with pytest.raises(InputError, match=r"typed\.parquet.*column 'correct'"):
        read_predictions(typed)


def test_failed_write_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "p.parquet"
    with pytest.raises(InputError, match="missing column"):
        write_predictions(pd.DataFrame({"item_id": ["x"]}), target)
    assert list(tmp_path.iterdir()) == []


def test_the_format_carries_its_version_and_the_reader_checks_it(tmp_path: Path) -> None:
    from blindmcq.analysis.frame import read_analysis_frame
    from blindmcq.answers.predictions import SCHEMA_VERSION, VERSION_KEY

    frame = read_predictions(write_predictions([record(0), record(1)], tmp_path / "a.parquet"))
    meta = pq.read_schema(tmp_path / "a.parquet").metadata
    assert meta[b"blindmcq.schema_version"] == str(SCHEMA_VERSION).encode()
    jsonl = write_predictions(frame, tmp_path / "a.jsonl")
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert all(row[VERSION_KEY] == SCHEMA_VERSION for row in rows)
    assert VERSION_KEY not in read_predictions(jsonl).columns
    assert len(read_analysis_frame(jsonl)) == len(read_analysis_frame(tmp_path / "a.parquet")) == 2
    # a file from a newer format is refused with its file (and line) named, by both readers
    rows[1][VERSION_KEY] = 99
    future = tmp_path / "future.jsonl"
    future.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"future\.jsonl.*line 2|line 2.*future\.jsonl|schema version 99"):
        read_predictions(future)
    with pytest.raises(InputError, match="schema version 99"):
        read_analysis_frame(future)
    table = pq.read_table(tmp_path / "a.parquet")
    pq.write_table(table.replace_schema_metadata({b"blindmcq.schema_version": b"7"}), tmp_path / "b.parquet")
    with pytest.raises(InputError, match="schema version '7'"):
        read_predictions(tmp_path / "b.parquet")
    # a file written before the version existed reads as version 1
    pq.write_table(table.replace_schema_metadata({}), tmp_path / "old.parquet")
    assert len(read_predictions(tmp_path / "old.parquet")) == 2


def test_the_one_reader_returns_the_columns_asked_for(tmp_path: Path) -> None:
    """A column list: the analysis asks the same reader for its columns; the file must still
    carry every column, and an unknown name is a programming error."""
    path = write_predictions([record(0), record(1)], tmp_path / "a.parquet")
    for source in (path, write_predictions([record(0), record(1)], tmp_path / "a.jsonl")):
        some = read_predictions(source, columns=["model", "item_id", "correct"])
        assert list(some.columns) == ["model", "item_id", "correct"]
        assert some.equals(read_predictions(source)[["model", "item_id", "correct"]])
    with pytest.raises(ValueError, match="raw_text_typo"):
        read_predictions(path, columns=["raw_text_typo"])
    pq.write_table(pq.read_table(path).drop(["request_hash"]), tmp_path / "old.parquet")
    with pytest.raises(InputError, match="missing column 'request_hash'"):
        read_predictions(tmp_path / "old.parquet", columns=["model"])
