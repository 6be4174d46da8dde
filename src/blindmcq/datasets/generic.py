"""Any multiple-choice bank in CSV, JSONL or Parquet, with any number of options, via a column mapping.

Mapping (every key optional except where said; defaults in brackets):
- ``question`` [``question``]: the stem column.
- ``options`` [``options``]: one column holding the list of options (a JSON/Parquet list; in CSV a
  JSON or Python list literal), OR ``option_columns``: one column per option in slot order
  (``[A, B, C, D]``; an empty cell is a blank option, kept as "" and flagged).
- ``key`` [``key``]: the key column, read according to ``key_format``:
  ``index`` (0-based integer), ``index1`` (1-based integer), ``label`` (a letter; ``labels`` gives
  the alphabet, case-insensitive; without it a Latin key is read in ``ABCDEFGHIJKLMNOPQRSTUVWXYZ`` and a
  Cyrillic one in the Ukrainian test alphabet ``АБВГДЕЄЖЗИІЇЙКЛМНОПРСТУФХЦЧШЩЬЮЯ``, so "В" is the
  third option, not a look-alike of "B"; a file whose keys mix the two scripts stops, asking for
  ``labels``), ``text`` (the key option's text itself).
- ``id`` [none]: a column with the bank's own item id; the item id becomes ``{source}-{bank}-{id}``,
  and the number is that id when it is an integer, else the 1-based row. Without it the number
  is the 1-based data row.
- ``source``, ``bank``: the id prefix parts [``generic``, the file stem].
- ``meta_columns`` [all others]: columns copied into ``meta``.

Rows are numbered from 1 over data rows (the CSV header is not a row); for JSONL the physical
line number is given. Every bad cell stops with an InputError naming file, row/line and column.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.datasets.items import Item, invariant_flags, item_id
from blindmcq.errors import ConfigError, InputError

KEY_FORMATS = ("index", "index1", "label", "text")
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}
LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UKRAINIAN = "АБВГДЕЄЖЗИІЇЙКЛМНОПРСТУФХЦЧШЩЬЮЯ"  # the order Ukrainian tests letter their options in


def key_alphabet(value: str) -> str:
    """The alphabet a key label is written in, by its script: Cyrillic letters read in the Ukrainian
    test order, anything else in the Latin one."""
    return UKRAINIAN if any("\u0400" <= ch <= "\u04ff" for ch in value) else LATIN


_SLUG = re.compile(r"[^0-9A-Za-z_.-]+")


def _rows(path: Path, fmt: str, header: bool = True) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, record) per data row; ``where`` is "line N" (JSONL) or "row N".

    A CSV without a header (``header=False``) has its columns named by position: "0", "1", ..."""
    if fmt == "jsonl":
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        f"not UTF-8 (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})",
                        file=str(path),
                        line=lineno,
                    ) from None
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"not valid JSON: {exc.msg}", file=str(path), line=lineno) from exc
                if not isinstance(record, dict):
                    raise InputError("expected a JSON object", file=str(path), line=lineno)
                yield f"line {lineno}", record
        return
    try:
        if fmt == "csv":
            _check_csv_rows(path)
            # Strings only, "" kept as "": a blank option must stay blank, not become NaN. index_col=False:
            # pandas would otherwise take the first column as the index when rows are one field longer.
            frame = pd.read_csv(
                path, dtype=str, keep_default_na=False, encoding="utf-8", index_col=False,
                header="infer" if header else None,
            )  # fmt: skip
            if not header:
                frame.columns = [str(c) for c in frame.columns]
        else:
            frame = pd.read_parquet(path)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"cannot read {fmt}: not UTF-8 ({exc.reason} at byte {exc.start})", file=str(path)
        ) from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read {fmt}: {exc}", file=str(path)) from exc
    if frame.empty:
        raise InputError(f"no data rows (columns {list(frame.columns)})", file=str(path))
    for index, values in enumerate(frame.itertuples(index=False, name=None), start=1):
        yield f"row {index}", dict(zip(frame.columns, values, strict=True))


MAX_CSV_FIELD = 2**31 - 1  # the largest field size Python's csv module accepts on every platform


def _check_csv_rows(path: Path) -> None:
    """Every CSV record has exactly the header's number of fields; a ragged row is named, never shifted."""
    import csv

    # Python's csv module stops at 128 KiB a field; a bank may hold a long statute excerpt in one cell.
    # pandas (which reads the data) has no such limit, so this check must not have one below it either.
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CSV_FIELD))
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        number = 0
        try:
            header = next(reader, None)
            if header is None:
                raise InputError("empty CSV (no header)", file=str(path))
            for number, row in enumerate(reader, start=1):
                if row and len(row) != len(header):
                    fields = f"has {len(row)} fields, the header {len(header)}"
                    raise InputError(f"row {number} (line {reader.line_num}) {fields}", file=str(path))
        except csv.Error as exc:
            raise InputError(f"row {number + 1} (line {reader.line_num}): {exc}", file=str(path)) from None


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays (Parquet list cells)
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _cell(record: dict[str, Any], column: str, where: str, file: str) -> Any:
    if column not in record:
        raise InputError(f"{where}: missing column {column!r} (have {sorted(record)})", file=file)
    return _plain(record[column])


def _options(record: dict[str, Any], mapping: dict[str, Any], where: str, file: str) -> list[str]:
    columns = mapping.get("option_columns")
    if columns:
        values = [_cell(record, c, where, file) for c in columns]
        return ["" if v is None else str(v) for v in values]
    column = mapping.get("options", "options")
    value = _cell(record, column, where, file)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError) as exc:
                raise InputError(f"{where}, column {column!r}: not a list of options", file=file) from exc
    if not isinstance(value, list | tuple) or not all(isinstance(o, str) for o in value):
        raise InputError(f"{where}, column {column!r}: expected a list of strings, got {value!r}", file=file)
    return list(value)


def _key(value: Any, options: list[str], mapping: dict[str, Any], where: str, file: str) -> int:
    fmt, column = mapping.get("key_format", "index"), mapping.get("key", "key")
    n = len(options)
    bad = f"{where}, column {column!r}: {value!r}"
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(f"{bad}: the key is empty", file=file)
    if fmt in ("index", "index1"):
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise InputError(f"{bad} is not an integer ({fmt})", file=file)  # JSON true is not option 1
        if isinstance(value, float):
            value = int(value)
        try:
            number = int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError as exc:
            raise InputError(f"{bad} is not an integer ({fmt})", file=file) from exc
        index = number - 1 if fmt == "index1" else number
        if not 0 <= index < n:
            raise InputError(f"{bad} is outside the {n} options ({fmt})", file=file)
        return index
    if fmt == "label":
        label = str(value).strip().casefold()
        alphabet = mapping.get("labels") or key_alphabet(label)
        labels = [str(letter).casefold() for letter in alphabet][:n]
        if label not in labels:
            raise InputError(f"{bad} is not one of the labels {labels} of {n} options", file=file)
        return labels.index(label)
    # fmt == "text": exactly one option must carry the key's text.
    matches = [j for j, o in enumerate(options) if o.strip() == str(value).strip()]
    if len(matches) != 1:
        raise InputError(f"{bad} matches {len(matches)} options, not exactly one", file=file)
    return matches[0]


def _check_mapping(mapping: dict[str, Any]) -> None:
    if mapping.get("key_format", "index") not in KEY_FORMATS:
        raise ConfigError("dataset.key_format", f"expected one of {list(KEY_FORMATS)}")
    columns = mapping.get("option_columns")
    if columns is not None and (not isinstance(columns, list) or len(columns) < 2):
        raise ConfigError("dataset.option_columns", "expected a list of at least two column names")
    if columns and "options" in mapping:
        raise ConfigError("dataset.option_columns", "give either 'options' or 'option_columns', not both")


def load_generic(
    path: str | Path,
    *,
    source: str = "generic",
    bank: str | None = None,
    format: str | None = None,
    question: str = "question",
    options: str | None = None,
    option_columns: Sequence[str] | None = None,
    key: str = "key",
    key_format: str = "index",
    labels: Sequence[str] | str | None = None,
    id: str | None = None,
    meta_columns: Sequence[str] | None = None,
    header: bool = True,
) -> list[Item]:
    """Items of a CSV/JSONL/Parquet bank in file order (see module docstring for the mapping).

    ``header=False`` reads a CSV whose first line is data; its columns are "0", "1", ... by position."""
    path = Path(path)
    mapping: dict[str, Any] = {"key": key, "key_format": key_format, "labels": labels}
    if options is not None:
        mapping["options"] = options
    if option_columns is not None:
        mapping["option_columns"] = list(option_columns)
    _check_mapping(mapping)
    fmt = format or FORMATS.get(path.suffix.lower())
    if fmt not in FORMATS.values():
        raise ConfigError(
            "dataset.format", f"cannot tell the format of {path.name}; set csv, jsonl or parquet"
        )
    if not path.exists():
        raise InputError("bank file not found", file=str(path))
    if not header and fmt != "csv":
        raise ConfigError("dataset.header", f"only a CSV can lack a header; {path.name} is {fmt}")
    bank = bank or path.stem
    file = str(path)
    used = {question, key, id, options or "options", *(option_columns or ())}
    items: list[Item] = []
    seen: dict[str, str] = {}
    scripts: dict[str, str] = {}  # key alphabet -> the first row that used it (label keys)
    for row_number, (where, record) in enumerate(_rows(path, fmt, header), start=1):
        stem = _cell(record, question, where, file)
        if not isinstance(stem, str):
            raise InputError(f"{where}, column {question!r}: expected text, got {stem!r}", file=file)
        opts = _options(record, mapping, where, file)
        raw_key = _cell(record, key, where, file)
        key_index = _key(raw_key, opts, mapping, where, file)
        if mapping.get("key_format") == "label" and not mapping.get("labels"):
            scripts.setdefault(key_alphabet(str(raw_key)), where)
            if len(scripts) > 1:
                first = ", ".join(
                    f"{'Cyrillic' if a == UKRAINIAN else 'Latin'} at {w}" for a, w in scripts.items()
                )
                raise InputError(
                    f"the key labels mix Latin and Cyrillic letters ({first}); give the alphabet in "
                    "the dataset config's labels, since look-alikes such as B and В name different options",
                    file=file,
                )
        own = row_number if id is None else _cell(record, id, where, file)
        if own is None or str(own).strip() == "":
            raise InputError(f"{where}, column {id!r}: the id is empty", file=file)
        own_text = _SLUG.sub("_", str(own).strip())
        number = int(own) if isinstance(own, int) or own_text.isdigit() else row_number
        iid = item_id(source, bank, own_text)
        if iid in seen:
            raise InputError(f"{where}: item id {iid} repeats ({seen[iid]})", file=file, item=iid)
        seen[iid] = where
        flags = invariant_flags(opts, [key_index], None)
        status = "malformed" if "invariant" in flags else "ok"
        extra = meta_columns if meta_columns is not None else [c for c in record if c not in used]
        items.append(
            Item(
                id=iid,
                source=source,
                bank=bank,
                number=number,
                question=stem,
                options=tuple(opts),
                key=key_index if status == "ok" else None,
                status=status,
                flags=tuple(flags),
                file=path.name,
                meta={"row": where, **{c: _plain(record.get(c)) for c in extra}},
            )
        )
    return items
