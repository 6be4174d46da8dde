"""Predictions files: one row per model call (``PredictionRecord``), as Parquet or as JSONL.

Format (the released predictions):

* Columns, exactly and in this order, those of ``blindmcq.records.PREDICTION_COLUMNS``:
  ``item_id`` (str), ``model`` (str, the model config name), ``condition`` (``blind``/``full``),
  ``phrasing`` (str), ``labels`` (``latin``/``cyrillic``/``numerals``/``dash``), ``protocol``
  (``sl``/``md``), ``reasoning`` (``direct``/``step_by_step``/``thinking``), ``order`` (list of int:
  the original option index shown in each slot), ``order_id`` (``rot0``..``rot3``, ``rev0``..``rev3``,
  ``forced0``..), ``forced_slot`` (int or null), ``key_slot`` (int or null), ``n_options`` (int),
  ``picked_slot`` (int or null), ``picked_option`` (original option index or null), ``correct`` (bool;
  false for every call whose answer was not parsed), ``parse_status`` (``ok``, ``unparseable``,
  ``other_scheme``, ``refused``, ``error``, ``uncertain``, ``tie``), ``raw_response`` (str),
  ``input_tokens`` / ``output_tokens`` (int or null), ``latency_s`` (float or null), ``region``
  (str or null), ``request_hash`` (sha256 of backend, model and the full request; the cache key),
  ``time`` (ISO 8601 UTC, when the response arrived), ``backend`` (str), ``cached`` (bool: the
  response came from the cache, not a new call), ``error`` (str or null), ``setting`` (str),
  ``stop_reason`` (str or null: the backend's stop reason, ``max_tokens`` for a truncated answer; files
  written before it existed read as null).
* Slots and option indices are 0-based.
* Parquet: Arrow types string, int64, float64, bool, and ``list<int64>`` for ``order``; zstd
  compression. JSONL: UTF-8, one JSON object per line with the same keys, ``null`` for missing values.

Files are written all-or-nothing; reading checks every column is present and typed as above.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from blindmcq.atomic import atomic_path
from blindmcq.errors import InputError
from blindmcq.records import PREDICTION_COLUMNS, PredictionRecord

_STR, _INT, _FLOAT, _BOOL = pa.string(), pa.int64(), pa.float64(), pa.bool_()
SCHEMA = pa.schema(
    [
        ("item_id", _STR),
        ("model", _STR),
        ("condition", _STR),
        ("phrasing", _STR),
        ("labels", _STR),
        ("protocol", _STR),
        ("reasoning", _STR),
        ("order", pa.list_(_INT)),
        ("order_id", _STR),
        ("forced_slot", _INT),
        ("key_slot", _INT),
        ("n_options", _INT),
        ("picked_slot", _INT),
        ("picked_option", _INT),
        ("correct", _BOOL),
        ("parse_status", _STR),
        ("raw_response", _STR),
        ("input_tokens", _INT),
        ("output_tokens", _INT),
        ("latency_s", _FLOAT),
        ("region", _STR),
        ("request_hash", _STR),
        ("time", _STR),
        ("backend", _STR),
        ("cached", _BOOL),
        ("error", _STR),
        ("setting", _STR),
        ("stop_reason", _STR),
    ]
)
# columns added after the first release: older files without them read as nulls
_OPTIONAL = frozenset({"stop_reason"})
assert tuple(SCHEMA.names) == PREDICTION_COLUMNS, "SCHEMA is out of step with PredictionRecord"

# Nullable pandas dtypes, so an int column stays int with missing values instead of turning float.
_PANDAS_TYPES = {_STR: pd.StringDtype(), _INT: pd.Int64Dtype(), _BOOL: pd.BooleanDtype()}

Predictions = Sequence[PredictionRecord] | pd.DataFrame | pa.Table
PathLike = str | os.PathLike[str]


def to_table(predictions: Predictions) -> pa.Table:
    """Records, a DataFrame or a Table -> an Arrow table with exactly SCHEMA."""
    if isinstance(predictions, pa.Table):
        return _conform(predictions, source="table")
    if isinstance(predictions, pd.DataFrame):
        return _conform(pa.Table.from_pandas(predictions, preserve_index=False), source="data frame")
    return pa.Table.from_pylist([r.to_row() for r in predictions], schema=SCHEMA)


def to_frame(table: pa.Table) -> pd.DataFrame:
    frame = table.to_pandas(types_mapper=_PANDAS_TYPES.get)
    frame["order"] = [list(map(int, o)) if o is not None else None for o in frame["order"]]
    return frame


def to_records(predictions: Predictions) -> list[PredictionRecord]:
    return [PredictionRecord(**row) for row in to_table(predictions).to_pylist()]


def write_predictions(predictions: Predictions, path: PathLike) -> Path:
    """Write Parquet (``.parquet``) or JSONL (``.jsonl``), chosen by the suffix, atomically."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return write_predictions_jsonl(predictions, path)
    table = to_table(predictions)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def write_predictions_jsonl(predictions: Predictions, path: PathLike) -> Path:
    path = Path(path)
    rows = to_table(predictions).to_pylist()
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def read_table(path: PathLike) -> pa.Table:
    """A validated predictions table from Parquet or JSONL (by suffix)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return _read_jsonl(path)
    try:  # corrupt footers or pages raise OSError, ArrowException or (in column names) UnicodeDecodeError
        names = pq.read_schema(path).names
        _check_columns(names, file=str(path))
        table = pq.read_table(path, columns=[c for c in PREDICTION_COLUMNS if c in names])
    except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:
        raise InputError(f"not a readable Parquet file ({exc})", file=str(path)) from exc
    return _conform(table, source=str(path))


def read_predictions(path: PathLike) -> pd.DataFrame:
    return to_frame(read_table(path))


def read_records(path: PathLike) -> list[PredictionRecord]:
    return to_records(read_table(path))


def concat_predictions(parts: Iterable[pd.DataFrame | PathLike]) -> pd.DataFrame:
    """Concatenate frames and/or files into one validated frame (an empty list gives an empty frame)."""
    tables = [to_table(part) if isinstance(part, pd.DataFrame) else read_table(part) for part in parts]
    return to_frame(pa.concat_tables(tables) if tables else SCHEMA.empty_table())


def _check_columns(names: Iterable[str], *, file: str, line: int | None = None) -> None:
    present = set(names)
    for column in PREDICTION_COLUMNS:
        if column not in present and column not in _OPTIONAL:
            raise InputError(f"missing column '{column}'", file=file, line=line)


def _conform(table: pa.Table, *, source: str) -> pa.Table:
    _check_columns(table.column_names, file=source)
    for name in sorted(_OPTIONAL - set(table.column_names)):
        table = table.append_column(name, pa.nulls(table.num_rows, SCHEMA.field(name).type))
    table = table.select(list(PREDICTION_COLUMNS))
    for name, want in zip(SCHEMA.names, SCHEMA.types, strict=True):
        column = table.column(name)
        if column.type == want:
            continue
        try:
            table = table.set_column(table.schema.get_field_index(name), name, column.cast(want))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InputError(
                f"column '{name}' is {column.type}, expected {want} ({exc})", file=source
            ) from exc
    return table


def _read_jsonl(path: Path) -> pa.Table:
    rows: list[dict[str, object]] = []
    line_numbers: list[int] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"not valid JSON ({exc.msg})", file=str(path), line=number) from exc
                if not isinstance(row, dict):
                    raise InputError("expected a JSON object", file=str(path), line=number)
                _check_columns(row, file=str(path), line=number)
                rows.append(row)
                line_numbers.append(number)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", file=str(path)) from exc
    try:
        return pa.Table.from_pylist(rows, schema=SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # only on failure: find the first offending line to name it
        for row, number in zip(rows, line_numbers, strict=True):
            try:
                pa.Table.from_pylist([row], schema=SCHEMA)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise InputError(f"wrong value type ({exc})", file=str(path), line=number) from exc
        raise
