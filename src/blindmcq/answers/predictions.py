"""Predictions files: one row per model call (``PredictionRecord``), as Parquet or as JSONL, and the
analysis's view of them.

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

* Version: ``SCHEMA_VERSION`` (now 1), in the Parquet schema metadata under ``blindmcq.schema_version``
  and as the ``schema_version`` key of every JSONL row. A file without it predates the version and
  reads as version 1; a version this code does not know is an error naming the file (and line).
  docs/predictions.md documents the format.

Files are written all-or-nothing; reading checks the version and that every column is present and typed
as above.

What varies from run to run of the same calls (``VOLATILE``: ``latency_s``, ``time``, ``cached``) is
written as null in a predictions file under a ``results`` folder (the pipeline's outputs), so a rerun
from the response cache writes the same bytes and DVC sees the same hash. The real values go to a call
log outside every DVC output (``call_log_path``: ``results/predictions/predictions.parquet`` ->
``results/calls/predictions/predictions.parquet``), one row per prediction row in the same order,
keyed by ``request_hash``. Reading a predictions file fills those columns back from its call log when
the log's keys match row for row; otherwise (a file pulled without its log) they stay null.

One reader, ``read_table`` (a column list, the version and type checks), serves both views:
``read_predictions`` (every released column, typed as written) and ``read_analysis_frame`` (the analysed
columns ``ANALYSED`` only, compacted and checked by ``prepare``; ``select`` takes the rows of a
``Baseline`` presentation from it). The gate, the metrics and the tables read the second.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from blindmcq.answers.records import PREDICTION_COLUMNS, PredictionRecord
from blindmcq.atomic import atomic_path
from blindmcq.errors import ConfigError, InputError
from blindmcq.jsonl import jsonl_records
from blindmcq.vocabulary import CONDITIONS, FAILED_STATUSES

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

# per-call facts that differ between a first run and a rerun from the cache: kept out of hashed files
VOLATILE: tuple[str, ...] = ("latency_s", "time", "cached")
CALL_LOG_KEYS: tuple[str, ...] = ("item_id", "model", "condition", "order_id", "request_hash")


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


def call_log_path(path: PathLike) -> Path | None:
    """Where the call log of a results file goes: ``results/x/y.parquet`` -> ``results/calls/x/y.parquet``
    (not a DVC output); None for a file outside any ``results`` folder, which keeps every column."""
    parts = Path(path).parts
    if "results" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("results")
    return Path(*parts[: i + 1], "calls", *parts[i + 1 :]).with_suffix(".parquet")


def _split_volatile(table: pa.Table, path: Path) -> pa.Table:
    """Write the call log for ``path``; return the table with the volatile columns nulled."""
    target = call_log_path(path)
    if target is None:
        return table
    log = table.select([*CALL_LOG_KEYS, *VOLATILE])
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        pq.write_table(log, tmp, compression="zstd")
    for name in VOLATILE:
        index = table.schema.get_field_index(name)
        table = table.set_column(index, name, pa.nulls(len(table), SCHEMA.field(name).type))
    return table


def split_call_log(frame: pd.DataFrame, path: PathLike) -> pd.DataFrame:
    """For a results table in another shape (AnswerPool's pooled rows): write the volatile columns it
    has, with its key columns, to the call log of ``path``; return the frame with those columns null."""
    volatile = [c for c in VOLATILE if c in frame.columns]
    target = call_log_path(path)
    if not volatile or target is None:
        return frame
    keys = [c for c in (*CALL_LOG_KEYS, "group_id", "question") if c in frame.columns]
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        frame[keys + volatile].to_parquet(tmp, index=False)
    empty = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return frame.assign(**dict.fromkeys(volatile, empty))


def _join_call_log(table: pa.Table, path: Path) -> pa.Table:
    """Fill the volatile columns from the call log if it belongs to this file (same keys, same order)."""
    log_path = call_log_path(path)
    if log_path is None or not log_path.is_file():
        return table
    try:
        log = pq.read_table(log_path, columns=[*CALL_LOG_KEYS, *VOLATILE])
    except (OSError, pa.ArrowException, ValueError):
        return table  # the log is a convenience; the predictions file stands without it
    if log.num_rows != table.num_rows or not all(
        log.column(k).cast(_STR).equals(table.column(k)) for k in CALL_LOG_KEYS
    ):
        return table
    for name in VOLATILE:
        if table.column(name).null_count == table.num_rows:  # written nulled by this module
            column = log.column(name).cast(SCHEMA.field(name).type)
            table = table.set_column(table.schema.get_field_index(name), name, column)
    return table


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


def to_records(predictions: Predictions) -> list[PredictionRecord]:
    return [PredictionRecord(**row) for row in to_table(predictions).to_pylist()]


def write_predictions(predictions: Predictions, path: PathLike) -> Path:
    """Write Parquet (``.parquet``) or JSONL (``.jsonl``), chosen by the suffix, atomically."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return write_predictions_jsonl(predictions, path)
    table = _with_version(_split_volatile(to_table(predictions), path))
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def write_predictions_jsonl(predictions: Predictions, path: PathLike) -> Path:
    path = Path(path)
    rows = _split_volatile(to_table(predictions), path).to_pylist()
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
        table = _join_call_log(table, path)
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


# ---------------------------------------------------------------- the analysis frame
# What the analysis reads: the analysed columns only, with compact dtypes (categories for labels, float for
# nullable slots) so a million rows fit and group quickly, checked once where they are loaded; and the rows
# of one presentation (``Baseline``: what headline numbers are measured on; sweeps vary one field at a time).

# Columns the analysis reads; the rest (raw text, hashes, latency) stay in the release only.
ANALYSED = (
    "item_id",
    "model",
    "condition",
    "phrasing",
    "labels",
    "protocol",
    "reasoning",
    "setting",
    "order_id",
    "forced_slot",
    "key_slot",
    "n_options",
    "picked_slot",
    "picked_option",
    "correct",
    "parse_status",
    "output_tokens",
    "stop_reason",
)
# Read when present, filled when absent: older predictions files have no stop reason (truncation 0).
ANALYSED_FILL = {"stop_reason": ""}
# A failed call: no answer came back (a backend error or a refusal), or the answer was cut off at the
# token limit before any option could be parsed. ``analysis.failed_calls`` decides how rates count them.
TRUNCATED = "max_tokens"
FLOATS = ("forced_slot", "key_slot", "picked_slot", "picked_option", "output_tokens")
# every other analysed column but the option count and the verdict is a label: a category
CATEGORIES = tuple(c for c in ANALYSED if c not in (*FLOATS, "n_options", "correct"))
PRESENTATION = ("phrasing", "labels", "protocol", "reasoning", "setting")
ORDER_RE = re.compile(r"^(rot|rev)\d+$")
ROTATION_RE = re.compile(r"^rot\d+$")


def read_analysis_frame(path: str | Path) -> pd.DataFrame:
    """Read released predictions (Parquet, or JSONL with one record a line) with the one reader above
    (``read_table``), asking it for the analysed columns only (``ANALYSED``: raw responses never enter
    memory), and ``prepare`` them. The file must carry every released column.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("predictions file not found", file=str(path))
    # plain NumPy dtypes (not the records' nullable ones): what ``prepare`` compacts into categories
    return prepare(read_table(path, columns=ANALYSED).to_pandas(), source=str(path))


def check_item_ids(predictions: pd.DataFrame, known: Iterable[str], *, source: str, corpus: str) -> None:
    """Every item a predictions file answers must be one of ``known`` (the run's corpus): answers to other
    items would join tables they do not belong to. One InputError naming ``source`` otherwise."""
    known = set(known)
    ids = set(predictions["item_id"].astype(str))
    unknown = sorted(ids - known)
    if unknown:
        shared = len(ids) - len(unknown)
        raise InputError(
            f"{len(unknown)} of its {len(ids)} item ids are not in {corpus} ({shared} shared; first unknown: "
            f"{unknown[0]}): these answers are to another bank's items",
            file=source,
        )


def _category(values: pd.Series) -> pd.Series:
    """Labels as a categorical of strings, missing as "" (converting categories, not every row)."""
    cat = values.astype("category")
    if not all(isinstance(c, str) for c in cat.cat.categories):
        cat = values.astype(str).where(values.notna(), "").astype("category")
    if cat.isna().any():
        cat = cat.cat.add_categories([""]) if "" not in cat.cat.categories else cat
        cat = cat.fillna("")
    return cat


def prepare(predictions: pd.DataFrame, *, source: str = "predictions") -> pd.DataFrame:
    """Check the analysed columns (``ANALYSED``) and return them with compact dtypes.

    Raises InputError naming ``source`` (and the first offending item) on missing columns, unknown
    conditions, slots outside ``0..N-1``, or a row marked correct whose pick is not the key.
    """
    missing = [c for c in ANALYSED if c not in predictions.columns and c not in ANALYSED_FILL]
    if missing:
        raise InputError(f"missing prediction columns {missing}", file=source)
    extra = {c: v for c, v in ANALYSED_FILL.items() if c not in predictions.columns}
    df = (predictions.assign(**extra) if extra else predictions).loc[:, list(ANALYSED)].copy()
    for col in CATEGORIES:
        df[col] = _category(df[col])
    for col in FLOATS:
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["n_options"] = pd.to_numeric(df["n_options"], errors="coerce")
    df["correct"] = df["correct"].astype(bool)

    def fail(mask: np.ndarray | pd.Series, what: str) -> None:
        bad = np.flatnonzero(np.asarray(mask))
        if bad.size:
            row = int(bad[0])
            raise InputError(
                f"{what} ({bad.size} rows; first at row {row})", file=source, item=str(df["item_id"].iat[row])
            )

    fail(df["n_options"].isna() | (df["n_options"] < 2), "n_options missing or below 2")
    df["n_options"] = df["n_options"].astype(int)
    fail(~df["condition"].isin(CONDITIONS), f"condition not one of {CONDITIONS}")
    for col in ("key_slot", "picked_slot", "forced_slot"):
        fail((df[col] < 0) | (df[col] >= df["n_options"]), f"{col} outside 0..n_options-1")
    fail(
        df["correct"] & (df["picked_slot"] != df["key_slot"]), "marked correct but picked slot is not the key"
    )
    fail(df["forced_slot"].notna() & (df["forced_slot"] != df["key_slot"]), "forced slot is not the key slot")
    return df


def failed_mask(df: pd.DataFrame) -> np.ndarray:
    """Rows whose call failed: an error or refusal, or a truncated response with no parsed answer."""
    status = df["parse_status"].astype(str).to_numpy() if len(df) else np.array([], dtype=str)
    failed = np.isin(status, FAILED_STATUSES)
    if "stop_reason" in df:
        failed |= (df["stop_reason"].astype(str).to_numpy() == TRUNCATED) & (status != "ok")
    return failed


def failure_counts(df: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per group: calls, errors, refusals and truncated calls (``stop_reason`` max_tokens, parsed or not)."""
    cols = ["n_calls", "n_error", "n_refused", "n_truncated"]
    if df.empty:
        return pd.DataFrame(columns=[*by, *cols])
    status = df["parse_status"].astype(str)
    trunc = df["stop_reason"].astype(str) == TRUNCATED if "stop_reason" in df else pd.Series(False, df.index)
    flags = pd.DataFrame(
        {"n_calls": 1, "n_error": status == "error", "n_refused": status == "refused", "n_truncated": trunc},
        index=df.index,
    ).astype(int)
    keys = [df[b] for b in by]
    return flags.groupby(keys, observed=True).sum().reset_index()


def is_prepared(df: pd.DataFrame) -> bool:
    return list(df.columns) == list(ANALYSED) and isinstance(df["model"].dtype, pd.CategoricalDtype)


def ensure(df: pd.DataFrame) -> pd.DataFrame:
    """``prepare`` unless already prepared (so public functions accept either)."""
    return df if is_prepared(df) else prepare(df)


Orders = Literal["all", "rotations"] | Sequence[str] | None


def order_mask(order_id: pd.Series, orders: Orders) -> np.ndarray:
    """Rows whose order is selected: "all" = every rotation/reversal (rot*/rev*), "rotations" = rot*,
    None = any unforced."""
    if orders is None:
        return np.ones(len(order_id), dtype=bool)
    if isinstance(orders, str):
        if orders not in ("all", "rotations"):
            raise ConfigError("orders", f"expected 'all', 'rotations' or a list of order ids, got {orders!r}")
        pattern = ORDER_RE if orders == "all" else ROTATION_RE
        cats = order_id.cat.categories if isinstance(order_id.dtype, pd.CategoricalDtype) else None
        if cats is not None:  # match on the categories once, not on every row
            good = np.array([bool(pattern.match(c)) for c in cats], dtype=bool)
            codes = order_id.cat.codes.to_numpy()
            return np.where(codes >= 0, good[codes], False)
        return order_id.astype(str).str.match(pattern).to_numpy()
    return order_id.isin(list(orders)).to_numpy()


@dataclass(frozen=True)
class Baseline:
    """The presentation headline numbers are measured on; a field set to None matches any value.

    Defaults follow the composed config (prompt ``original``, labels ``latin``, protocol ``sl``,
    reasoning ``direct``). ``orders`` selects unforced orders: "all" = rot*/rev*, or a list of ids.
    """

    phrasing: str | None = "original"
    labels: str | None = "latin"
    protocol: str | None = "sl"
    reasoning: str | None = "direct"
    setting: str | None = None
    orders: Orders = "all"

    def without(self, field: str) -> Baseline:
        """The same baseline with one presentation field left free (for a sweep over it)."""
        return replace(self, **{field: None})


def select(
    df: pd.DataFrame,
    base: Baseline,
    *,
    condition: str | None = None,
    forced: bool = False,
    items: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows of the baseline presentation; ``forced`` picks forced-placement rows instead of orders."""
    mask = np.ones(len(df), dtype=bool)
    for field in PRESENTATION:
        value = getattr(base, field)
        if value is not None:
            mask &= (df[field] == value).to_numpy()
    if condition is not None:
        mask &= (df["condition"] == condition).to_numpy()
    forced_rows = df["forced_slot"].notna().to_numpy()
    mask &= forced_rows if forced else (~forced_rows & order_mask(df["order_id"], base.orders))
    if items is not None:
        mask &= df["item_id"].isin(list(items)).to_numpy()
    return df.loc[mask]
