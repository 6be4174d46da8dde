"""The predictions file format: one row per model call (``PredictionRecord``), as Parquet or as JSONL.

Format (the released predictions):

* Columns, exactly and in this order, those of ``blindmcq.answers.records.PREDICTION_COLUMNS``:
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

* Version: ``SCHEMA_VERSION`` (1), in the Parquet schema metadata under ``blindmcq.schema_version``
  and as the ``schema_version`` key of every JSONL row. A file without it predates the version and
  reads as version 1; a version this code does not know is an error naming the file (and line).
  docs/predictions.md documents the format.

Files are written all-or-nothing; reading checks the version and that every column is present and typed
as above.

What varies from run to run of the same calls (``VOLATILE``) is written null under a ``results`` folder
and kept in the file's call log (``answers/calllog.py``), which reading fills back.

One reader, ``read_table`` (a column list, the version and type checks): ``read_predictions`` gives every
released column, typed as written; the analysis's view (``analysis/frame.py``, ``read_analysis_frame``)
asks it for the analysed columns only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from blindmcq.answers.calllog import CALL_LOG_KEYS, VOLATILE, join_call_log, split_volatile
from blindmcq.answers.records import PREDICTION_COLUMNS, PredictionRecord
from blindmcq.atomic import atomic_path
from blindmcq.errors import InputError
from blindmcq.jsonl import jsonl_records

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
SCHEMA_VERSION = 1
KNOWN_VERSIONS = frozenset({1})
VERSION_KEY = "schema_version"  # the JSONL key; in Parquet metadata ``blindmcq.schema_version``
_PARQUET_VERSION_KEY = b"blindmcq.schema_version"
assert tuple(SCHEMA.names) == PREDICTION_COLUMNS, "SCHEMA is out of step with PredictionRecord"

# Nullable pandas dtypes, so an int column stays int with missing values instead of turning float.
_PANDAS_TYPES = {_STR: pd.StringDtype(), _INT: pd.Int64Dtype(), _BOOL: pd.BooleanDtype()}

Predictions = Sequence[PredictionRecord] | pd.DataFrame | pa.Table
PathLike = str | os.PathLike[str]


def check_version(version: object, *, file: str, line: int | None = None) -> int:
    """The predictions format version of a file; an unknown one is an InputError naming the file."""
    if version is None:
        return 1  # written before the format carried a version: the version-1 columns
    try:
        number = int(version)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        number = -1
    if isinstance(version, bool) or number not in KNOWN_VERSIONS:
        known = ", ".join(map(str, sorted(KNOWN_VERSIONS)))
        raise InputError(
            f"predictions schema version {version!r} is not one this blindmcq reads ({known})",
            file=file, line=line,
        )  # fmt: skip
    return number


def parquet_version(schema: pa.Schema, *, file: str) -> int:
    """The checked version in a Parquet file's schema metadata (absent: 1)."""
    raw = (schema.metadata or {}).get(_PARQUET_VERSION_KEY)
    return check_version(None if raw is None else raw.decode("utf-8", "replace"), file=file)


def _with_version(table: pa.Table) -> pa.Table:
    meta = dict(table.schema.metadata or {})
    meta[_PARQUET_VERSION_KEY] = str(SCHEMA_VERSION).encode()
    return table.replace_schema_metadata(meta)


def to_table(predictions: Predictions) -> pa.Table:
    """Records, a DataFrame or a Table -> an Arrow table with exactly SCHEMA."""
    if isinstance(predictions, pa.Table):
        return _conform(predictions, source="table")
    if isinstance(predictions, pd.DataFrame):
        return _conform(pa.Table.from_pandas(predictions, preserve_index=False), source="data frame")
    return pa.Table.from_pylist([r.to_row() for r in predictions], schema=SCHEMA)


def to_frame(table: pa.Table) -> pd.DataFrame:
    frame = table.to_pandas(types_mapper=_PANDAS_TYPES.get)
    if "order" in frame.columns:
        frame["order"] = [list(map(int, o)) if o is not None else None for o in frame["order"]]
    return frame


def write_predictions(predictions: Predictions, path: PathLike) -> Path:
    """Write Parquet (``.parquet``) or JSONL (``.jsonl``), chosen by the suffix, atomically."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return write_predictions_jsonl(predictions, path)
    table = _with_version(split_volatile(to_table(predictions), path))
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def write_predictions_jsonl(predictions: Predictions, path: PathLike) -> Path:
    path = Path(path)
    rows = split_volatile(to_table(predictions), path).to_pylist()
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps({**row, VERSION_KEY: SCHEMA_VERSION}, ensure_ascii=False) + "\n")
    return path


def _wanted(columns: Sequence[str] | None) -> tuple[str, ...]:
    if columns is None:
        return PREDICTION_COLUMNS
    unknown = [c for c in columns if c not in PREDICTION_COLUMNS]
    if unknown:
        raise ValueError(f"not predictions columns: {unknown}")
    return tuple(columns)


def read_table(path: PathLike, columns: Sequence[str] | None = None) -> pa.Table:
    """A validated predictions table from Parquet or JSONL (by suffix). The file must carry every
    column; ``columns`` (default all of ``PREDICTION_COLUMNS``) are the ones returned, and the only ones
    loaded from Parquet, so a reader that needs no raw responses never holds them in memory."""
    path = Path(path)
    wanted = _wanted(columns)
    if path.suffix == ".jsonl":
        table = _read_jsonl(path).select(list(wanted))
    else:
        try:  # corrupt footers or pages raise OSError, ArrowException or (in column names) UnicodeDecodeError
            schema = pq.read_schema(path)
            names = schema.names
            parquet_version(schema, file=str(path))
            _check_columns(names, file=str(path))
            table = pq.read_table(path, columns=[c for c in wanted if c in names])
        except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:
            raise InputError(f"not a readable Parquet file ({exc})", file=str(path)) from exc
        table = _conform(table, source=str(path), columns=wanted)
    # the call log fills the volatile columns back, matched by the key columns (both must be asked for)
    if set(VOLATILE) & set(wanted) and set(CALL_LOG_KEYS) <= set(wanted):
        table = join_call_log(table, path)
    return table


def read_predictions(path: PathLike, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The one predictions reader: a Parquet or JSONL predictions file (any version this code knows)
    as a typed frame with the columns of ``PREDICTION_COLUMNS`` (or just ``columns``, in that order)."""
    return to_frame(read_table(path, columns))


def _check_columns(
    names: Iterable[str], *, file: str, line: int | None = None, columns: Sequence[str] = PREDICTION_COLUMNS
) -> None:
    present = set(names)
    for column in columns:
        if column not in present and column not in _OPTIONAL:
            raise InputError(f"missing column '{column}'", file=file, line=line)


def _conform(table: pa.Table, *, source: str, columns: Sequence[str] = PREDICTION_COLUMNS) -> pa.Table:
    """``table`` with exactly ``columns`` (an absent optional one null), each of the schema's type."""
    _check_columns(table.column_names, file=source, columns=columns)
    for name in sorted(_OPTIONAL & set(columns) - set(table.column_names)):
        table = table.append_column(name, pa.nulls(table.num_rows, SCHEMA.field(name).type))
    table = table.select(list(columns))
    for name in columns:
        want = SCHEMA.field(name).type
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
        for number, row in jsonl_records(path):
            check_version(row.pop(VERSION_KEY, None), file=str(path), line=number)
            _check_columns(row, file=str(path), line=number)
            rows.append(row)
            line_numbers.append(number)
    except OSError as exc:
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
