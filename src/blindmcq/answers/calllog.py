"""The call log: what varies from run to run of the same calls (``VOLATILE``: ``latency_s``, ``time``,
``cached``), kept out of the hashed results files so that a rerun from the response cache writes the same
bytes and DVC sees the same hash.

A predictions file under a ``results`` folder (the pipeline's outputs) is written with those columns null;
their real values go to its call log outside every DVC output (``call_log_path``:
``results/predictions/predictions.parquet`` -> ``results/calls/predictions/predictions.parquet``), one row
per prediction row in the same order, keyed by ``CALL_LOG_KEYS``. Reading the file fills the columns back
from its log when the log's keys match row for row (``join_call_log``); otherwise (a file pulled without
its log) they stay null.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from blindmcq.atomic import atomic_path

PathLike = str | os.PathLike[str]

# per-call facts that differ between a first run and a rerun from the cache: kept out of hashed files
VOLATILE: tuple[str, ...] = ("latency_s", "time", "cached")
CALL_LOG_KEYS: tuple[str, ...] = ("item_id", "model", "condition", "order_id", "request_hash")


def call_log_path(path: PathLike) -> Path | None:
    """Where the call log of a results file goes: ``results/x/y.parquet`` -> ``results/calls/x/y.parquet``
    (not a DVC output); None for a file outside any ``results`` folder, which keeps every column."""
    parts = Path(path).parts
    if "results" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("results")
    return Path(*parts[: i + 1], "calls", *parts[i + 1 :]).with_suffix(".parquet")


def split_volatile(table: pa.Table, path: Path) -> pa.Table:
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
        table = table.set_column(index, name, pa.nulls(len(table), table.schema.field(name).type))
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


def join_call_log(table: pa.Table, path: Path) -> pa.Table:
    """Fill the volatile columns from the call log if it belongs to this file (same keys, same order)."""
    log_path = call_log_path(path)
    if log_path is None or not log_path.is_file():
        return table
    try:
        log = pq.read_table(log_path, columns=[*CALL_LOG_KEYS, *VOLATILE])
    except (OSError, pa.ArrowException, ValueError):
        return table  # the log is a convenience; the predictions file stands without it
    if log.num_rows != table.num_rows or not all(
        log.column(k).cast(table.schema.field(k).type).equals(table.column(k)) for k in CALL_LOG_KEYS
    ):
        return table
    for name in VOLATILE:
        if table.column(name).null_count == table.num_rows:  # written nulled by split_volatile
            column = log.column(name).cast(table.schema.field(name).type)
            table = table.set_column(table.schema.get_field_index(name), name, column)
    return table
