"""Any multiple-choice bank, with any number of options, via a column mapping; one reader per file kind:
CSV/TSV (with or without a header), JSONL (lm-evaluation-harness records too), Parquet, XLSX (first
sheet; options as columns or one list-valued cell) and a Hugging Face ``datasets`` folder written by
``save_to_disk`` (its Arrow IPC stream files, read with pyarrow; ``datasets`` is not needed).

What the mapping leaves out is guessed from the column names and the first rows (``guess_mapping``) and
logged in one line naming the keys that override it.

Mapping (every key optional; defaults in brackets, "guessed" by ``guess_mapping``):
- ``question`` [guessed]: the stem column.
- ``options`` [guessed]: one column holding the list of options (a JSON/Parquet list; in CSV a
  JSON or Python list literal), OR ``option_columns``: one column per option in slot order
  (``[A, B, C, D]``; an empty cell is a blank option, kept as "" and flagged).
- ``key`` [guessed]: the key column, read according to ``key_format`` [guessed]:
  ``index`` (0-based integer), ``index1`` (1-based integer), ``label`` (a letter; ``labels`` gives
  the alphabet, case-insensitive, going on past its end as AA, AB, ...; without it a Latin key is read in
  ``ABCDEFGHIJKLMNOPQRSTUVWXYZ`` and a
  Cyrillic one in the Ukrainian test alphabet ``АБВГДЕЄЖЗИІЇЙКЛМНОПРСТУФХЦЧШЩЬЮЯ``, so "В" is the
  third option, not a look-alike of "B"; digits read as the numerals scheme, "3" the third option; a
  file whose keys mix these stops, asking for ``labels``), ``text`` (the key option's text itself).
- ``id`` [none]: a column with the bank's own item id; the item id becomes ``{source}-{bank}-{id}``,
  and the number is that id when it is an integer, else the 1-based row. Without it the number
  is the 1-based data row.
- ``source``, ``bank``: the id prefix parts [``generic``, the file stem].
- ``meta_columns`` [all others]: columns copied into ``meta``.

Rows are numbered from 1 over data rows (the CSV header is not a row); for JSONL the physical
line number is given. Every bad cell stops with an InputError naming file, row/line and column.

What is read is bounded (``ReadLimits``, defaults below): XLSX and JSONL are streamed a row or a line at
a time; a file beyond a limit (more rows, a workbook inflating past its byte cap, a longer line) stops with
one line naming the file, what it holds and the limit, before the rest is read.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.config.schema import GenericDataset, choices, default
from blindmcq.datasets.items import Item, invariant_flags, item_id
from blindmcq.errors import ConfigError, InputError
from blindmcq.jsonl import MAX_LINE_BYTES, jsonl_records
from blindmcq.labels import combined
from blindmcq.vocabulary import BANK_FORMATS, HEADERLESS_FORMATS, KEY_FORMATS, BankFormat

log = logging.getLogger(__name__)

FORMATS: dict[str, BankFormat] = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx",
}  # fmt: skip
HF_FORMAT: BankFormat = "hf"  # a folder Hugging Face ``datasets`` wrote with save_to_disk (Arrow IPC)
LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UKRAINIAN = "АБВГДЕЄЖЗИІЇЙКЛМНОПРСТУФХЦЧШЩЬЮЯ"  # the order Ukrainian tests letter their options in


NUMERALS = "numerals"  # keys written 1, 2, 3, ...: the numerals scheme's labels, 1-based
SCRIPT_NAMES = {LATIN: "Latin", UKRAINIAN: "Cyrillic", NUMERALS: "numeral"}


def key_alphabet(value: str) -> str:
    """The alphabet a key label is written in, by its script: Cyrillic letters read in the Ukrainian
    test order, digits as the numerals scheme (1..N), anything else in the Latin order."""
    if value.strip().isdigit():
        return NUMERALS
    return UKRAINIAN if any("\u0400" <= ch <= "\u04ff" for ch in value) else LATIN


def slot_labels(
    key_format: str | None, alphabet: Sequence[str] | str | None, first_key: str | None, n: int
) -> list[str]:
    """The bank's own label of each of ``n`` slots, as its keys are written: the declared ``alphabet``
    (a string of letters or a list), else the script of ``first_key`` (А, Б, В, Г; A, B; 1, 2), going on
    past its end as the labels do (``labels.combined``); none (slots by position) unless keys are
    labels."""
    if key_format != "label" or n < 1:
        return []
    if not alphabet:
        if first_key is None or not str(first_key).strip():
            return []
        alphabet = key_alphabet(str(first_key))
    if alphabet == NUMERALS:
        return [str(i) for i in range(1, n + 1)]
    return combined(list(alphabet), n)[:n]


_SLUG = re.compile(r"[^0-9A-Za-z_.-]+")


def bank_format(path: Path, declared: str | None = None) -> str:
    """The format a bank is read in: ``declared`` (checked), else a save_to_disk folder, else the suffix."""
    if declared:
        if declared not in BANK_FORMATS:
            raise ConfigError("dataset.format", f"expected one of {list(BANK_FORMATS)}, got {declared!r}")
        return declared
    if path.is_dir():
        if (path / "state.json").is_file():
            return HF_FORMAT
        if (path / "dataset_dict.json").is_file():
            splits = sorted(p.name for p in path.iterdir() if (p / "state.json").is_file())
            raise InputError(f"a DatasetDict folder; give one split's folder (have {splits})", file=str(path))
        raise InputError(
            "a folder without state.json: not one that datasets' save_to_disk wrote", file=str(path)
        )
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None and path.suffix.lower() == ".pdf":  # a PDF bank is read by extraction, not as a table
        raise InputError(
            f"a PDF, not a table: extract its items first (blindmcq extract {path} --out DIR), then audit "
            "DIR/items.jsonl",
            file=str(path),
        )
    if fmt is None:
        raise ConfigError(
            "dataset.format",
            f"cannot tell the format of {path.name}; set one of {list(BANK_FORMATS)} "
            f"(suffixes {sorted(FORMATS)}, or a save_to_disk folder)",
        )
    return fmt


@dataclass(frozen=True)
class ReadLimits:
    """What a bank reader reads at most. Past a limit the read stops with one line saying the file is
    beyond it; nothing is cut short silently."""

    max_rows: int = 1_000_000  # data rows (lines of JSON) of a bank file, blank rows of a sheet included
    # a workbook's parts (an XLSX is a zip), uncompressed: their declared sizes are checked before parsing,
    # and zipfile inflates no part past its declared size (a part that would is a CRC error), so this also
    # bounds the bytes inflated while parsing
    max_xlsx_bytes: int = 256 * 2**20
    max_line_bytes: int = MAX_LINE_BYTES  # one JSON Lines line, read at most this far


READ_LIMITS = ReadLimits()


def _beyond_rows(where: str, limits: ReadLimits, path: Path) -> InputError:
    return InputError(
        f"more than {limits.max_rows:,} data rows ({where}): beyond what is read "
        f"(ReadLimits.max_rows); split the bank or raise the limit",
        file=str(path),
    )


def _hf_records(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a save_to_disk folder: ``state.json`` lists the Arrow IPC stream files in order."""
    import pyarrow as pa

    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
        files = [str(entry["filename"]) for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"state.json does not list the data files (_data_files): {exc}", file=str(path)
        ) from None
    for name in files:
        try:
            with pa.memory_map(str(path / name)) as source:
                table = pa.ipc.open_stream(source).read_all()
        except (OSError, pa.ArrowInvalid) as exc:
            raise InputError(f"not an Arrow IPC stream: {exc}", file=str(path / name)) from None
        yield from table.to_pylist()


def _rows(
    path: Path, fmt: str, header: bool, limits: ReadLimits = READ_LIMITS
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, record) per data row; ``where`` is "line N" (JSONL) or "row N"; more than
    ``limits.max_rows`` rows stop with one line.

    A CSV without a header (``header=False``) has its columns named by position: "0", "1", ..."""
    for count, (where, record) in enumerate(_all_rows(path, fmt, header, limits), start=1):
        if count > limits.max_rows:
            raise _beyond_rows(where, limits, path)
        yield where, record


def _all_rows(path: Path, fmt: str, header: bool, limits: ReadLimits) -> Iterator[tuple[str, dict[str, Any]]]:
    if fmt == HF_FORMAT:
        for index, record in enumerate(_hf_records(path), start=1):
            yield f"row {index}", record
        return
    if fmt == "jsonl":
        for lineno, record in jsonl_records(path, max_line_bytes=limits.max_line_bytes):
            yield f"line {lineno}", record
        return
    if fmt == "xlsx":
        yield from _xlsx_rows(path, header, limits)
        return
    if _ragged(path, fmt, header):
        yield from _ragged_rows(path, "\t" if fmt == "tsv" else ",")
        return
    try:
        if fmt in ("csv", "tsv"):
            sep = "\t" if fmt == "tsv" else ","
            _check_csv_rows(path, sep)
            # Strings only, "" kept as "": a blank option must stay blank, not become NaN. index_col=False:
            # pandas would otherwise take the first column as the index when rows are one field longer.
            frame = pd.read_csv(
                path, dtype=str, keep_default_na=False, encoding="utf-8", index_col=False, sep=sep,
                header="infer" if header else None,
            )  # fmt: skip
        else:
            frame = pd.read_parquet(path)
        if not header:
            frame.columns = [str(c) for c in frame.columns]
    except UnicodeDecodeError as exc:
        raise InputError(
            f"cannot read {fmt}: not UTF-8 ({exc.reason} at byte {exc.start})", file=str(path)
        ) from None
    except (OSError, ValueError, KeyError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read {fmt}: {exc}", file=str(path)) from exc
    if frame.empty:
        raise InputError(f"no data rows (columns {list(frame.columns)})", file=str(path))
    for index, values in enumerate(frame.itertuples(index=False, name=None), start=1):
        yield f"row {index}", dict(zip(frame.columns, values, strict=True))


def _check_workbook_size(path: Path, limit: int) -> None:
    """The workbook's parts, by the sizes its zip directory declares, inflate to at most ``limit`` bytes."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"cannot read workbook: not an XLSX (zip) file ({exc})", file=str(path)) from None
    total = sum(part.file_size for part in parts)
    if total > limit:
        biggest = max(parts, key=lambda part: part.file_size)
        raise InputError(
            f"its parts inflate to {total:,} bytes ({biggest.filename}: {biggest.file_size:,}): beyond "
            f"the {limit:,} bytes a workbook is read to (ReadLimits.max_xlsx_bytes)",
            file=str(path),
        )


def _xlsx_value(cell: Any) -> Any:
    """A cell as pandas' openpyxl reader gives it: "" for an empty cell, None for an error (#N/A), a
    whole number as an int (an integer key stays an integer), anything else as typed in the workbook."""
    value = cell.value
    if value is None:
        return ""
    if cell.data_type == "e":
        return None
    if cell.data_type == "n" and not isinstance(value, bool):
        try:
            whole = int(value)
        except (OverflowError, ValueError):  # inf, nan
            return float(value)
        return whole if whole == value else float(value)
    return value


def _xlsx_names(header: list[Any]) -> list[str]:
    """Column names from the header row as pandas makes them: "Unnamed: i" for a blank cell, a repeated
    name as "name.1", "name.2", ..."""
    names: list[str] = []
    for i, value in enumerate(header):
        name = f"Unnamed: {i}" if value == "" else str(value)
        base, n = name, 0
        while name in names:
            n += 1
            name = f"{base}.{n}"
        names.append(name)
    return names


def _xlsx_rows(path: Path, header: bool, limits: ReadLimits) -> Iterator[tuple[str, dict[str, Any]]]:
    """The first sheet's data rows, streamed (openpyxl's read-only mode): at most one row in memory, the
    workbook's size checked first and its rows counted as they come. Rows read as pandas' ``read_excel``
    read them: trailing blank cells and trailing blank rows dropped, a blank row between data rows a row of
    "" cells, a row shorter than the widest so far filled with ""."""
    import openpyxl

    _check_workbook_size(path, limits.max_xlsx_bytes)
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises several unrelated types for a broken workbook
        raise InputError(f"cannot read workbook: {exc}", file=str(path)) from None
    try:
        if not book.worksheets:
            raise InputError("cannot read workbook: it has no worksheet", file=str(path))
        sheet = book.worksheets[0]
        declared = sheet.max_row  # the sheet's <dimension>, where it has one
        if declared is not None and declared - int(header) > limits.max_rows:
            raise InputError(
                f"the first sheet declares {declared:,} rows (its dimension): more than the "
                f"{limits.max_rows:,} data rows read (ReadLimits.max_rows); split the bank or raise it",
                file=str(path),
            )
        sheet.reset_dimensions()  # rows as long as their cells, not as the dimension claims (as pandas)
        names: list[str] | None = None
        blank = 0  # blank rows held back: kept only if a data row follows (trailing ones are dropped)
        number = 0
        try:
            for physical, cells in enumerate(sheet.iter_rows(), start=1):
                if physical - int(header) > limits.max_rows:
                    raise _beyond_rows(f"sheet row {physical}", limits, path)
                values = [_xlsx_value(c) for c in cells]
                while values and values[-1] == "":
                    values.pop()
                if header and names is None:
                    names = _xlsx_names(values)
                    continue
                if not values:
                    blank += 1
                    continue
                width = max(len(names or ()), len(values))
                if names is None or len(names) < width:
                    names = (names or []) + [
                        str(i) if not header else f"Unnamed: {i}" for i in range(len(names or ()), width)
                    ]
                for _ in range(blank):
                    number += 1
                    yield f"row {number}", dict.fromkeys(names, "")
                blank = 0
                number += 1
                values += [""] * (len(names) - len(values))
                yield f"row {number}", dict(zip(names, values, strict=True))
        except InputError:
            raise
        except Exception as exc:  # a broken part, a CRC error where a part inflates past its declared size
            raise InputError(f"cannot read workbook: {exc}", file=str(path)) from None
        if number == 0:
            raise InputError(f"no data rows (columns {names or []})", file=str(path))
    finally:
        book.close()


MAX_CSV_FIELD = 2**31 - 1  # the largest field size Python's csv module accepts on every platform


DUPLICATES = choices(GenericDataset, "duplicates")
_ABSENT = object()  # a headerless row's missing option cell (a shorter row), never an option


def _ragged(path: Path, fmt: str, header: bool) -> str | None:
    """For a headerless CSV/TSV whose rows differ in length: the name of the key column every record gets
    (the last, ``_rows`` moving each row's last field there); None when the rows are even."""
    if header or fmt not in ("csv", "tsv"):
        return None
    widths = _csv_widths(path, "\t" if fmt == "tsv" else ",")
    return str(max(widths) - 1) if len(set(widths)) > 1 else None


def _csv_widths(path: Path, sep: str) -> list[int]:
    import csv

    csv.field_size_limit(max(csv.field_size_limit(), MAX_CSV_FIELD))
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return [len(row) for row in csv.reader(fh, delimiter=sep) if row]
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read csv: {exc}", file=str(path)) from None


def _ragged_rows(path: Path, sep: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A headerless CSV/TSV with rows of different lengths, each as the widest row's columns: question
    first, key last, the row's options between and ``_ABSENT`` for the options it does not have."""
    import csv

    width = max(_csv_widths(path, sep))
    with path.open(encoding="utf-8", newline="") as fh:
        for index, row in enumerate((r for r in csv.reader(fh, delimiter=sep) if r), start=1):
            if len(row) < 3:
                raise InputError(f"row {index} has {len(row)} fields; a question, options and a key need 3",
                                 file=str(path))  # fmt: skip
            cells = [row[0], *row[1:-1], *([_ABSENT] * (width - len(row))), row[-1]]
            yield f"row {index}", {str(i): v for i, v in enumerate(cells)}


def _check_csv_rows(path: Path, sep: str = ",") -> None:
    """Every CSV record has exactly the header's number of fields; a ragged row is named, never shifted."""
    import csv

    # Python's csv module stops at 128 KiB a field; a bank may hold a long statute excerpt in one cell.
    # pandas (which reads the data) has no such limit, so this check must not have one below it either.
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CSV_FIELD))
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
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


def _options(
    record: dict[str, Any], mapping: dict[str, Any], where: str, file: str
) -> tuple[list[str], list[str] | None]:
    """The item's options, and its own option labels where the cell carries them (ARC's
    ``{"text": [...], "label": ["A", ...]}``), which a ``label`` key is then read against."""
    columns = mapping.get("option_columns")
    if columns:
        values = [v for v in (_cell(record, c, where, file) for c in columns) if v is not _ABSENT]
        return ["" if v is None else str(v) for v in values], None
    column = mapping.get("options", "options")
    value = _cell(record, column, where, file)
    own_labels = None
    if isinstance(value, dict) and "text" in value:  # a struct cell: texts, and labels beside them
        own_labels = [str(x) for x in _plain(value.get("label")) or []] or None
        value = _plain(value["text"])
        if own_labels is not None and len(own_labels) != len(value or []):
            raise InputError(
                f"{where}, column {column!r}: {len(own_labels)} labels for the options", file=file
            )
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
    return list(value), own_labels


def _key(
    value: Any,
    options: list[str],
    mapping: dict[str, Any],
    where: str,
    file: str,
    own_labels: list[str] | None = None,
) -> int:
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
        alphabet = mapping.get("labels") or own_labels or key_alphabet(label)
        if alphabet == NUMERALS:  # "3" names the third option, as the numerals scheme labels it
            labels = [str(i) for i in range(1, n + 1)]
        else:  # past the alphabet, keys go on as the labels do: AA, AB, ... (labels.combined)
            labels = [letter.casefold() for letter in combined(list(alphabet), n)][:n]
        if label not in labels:
            raise InputError(f"{bad} is not one of the labels {labels} of {n} options", file=file)
        return labels.index(label)
    # fmt == "text": exactly one option must carry the key's text.
    matches = [j for j, o in enumerate(options) if o.strip() == str(value).strip()]
    if len(matches) != 1:
        raise InputError(f"{bad} matches {len(matches)} options, not exactly one", file=file)
    return matches[0]


CONFIG_ROLES = {  # what overrides each guess in a dataset config
    "question": "dataset.question", "options": "dataset.options (or option_columns)",
    "key": "dataset.key", "key_format": "dataset.key_format",
}  # fmt: skip
# Header names, matched case-insensitively with "_" and "-" read as spaces; Ukrainian (and Russian) ones
# beside the English, for banks such as ZNO's: "питання", "варіанти", "А".."Г" or "Варіант А", "відповідь"
QUESTION_NAMES = ("question", "stem", "query", "prompt", "input",
                  "питання", "запитання", "завдання", "текст питання", "вопрос")  # fmt: skip
OPTIONS_NAMES = ("options", "choices", "endings",  # a list-valued column (MMLU-Pro, lm-eval, HellaSwag)
                 "варіанти", "варіанти відповіді", "варианты", "варианты ответа")  # fmt: skip
KEY_NAMES = ("key", "answer", "gold", "label", "answerkey", "answer idx", "target", "correct")
# the Cyrillic key names: none outranks another ("відповідь" may as well be an examinee's answer), so two
# of them, or one beside an English key name, are ambiguous and stop naming the columns
CYRILLIC_KEY_NAMES = ("правильна відповідь", "правильний варіант", "ключ", "відповідь",
                      "правильный ответ", "ответ")  # fmt: skip
_OPTION_COLUMN = re.compile(
    r"^(?:option|opt|choice|варіант|вариант|відповідь|ответ)?[ _-]?([a-z]|[а-яєіїґ]|\d{1,2})$", re.I
)
_OPTION_SERIES = {  # the runs option columns are named in, first to last; one name per slot
    "Latin letters": list("abcdefghijklmnopqrstuvwxyz"),
    "Cyrillic letters": list(UKRAINIAN.lower()),
    "numbers from 1": [str(i) for i in range(1, 100)],
    "numbers from 0": [str(i) for i in range(100)],
}


def _header_name(column: str) -> str:
    return " ".join(column.casefold().replace("_", " ").replace("-", " ").split())


def _first(columns: Sequence[str], names: Sequence[str]) -> str | None:
    by_name: dict[str, str] = {}
    for c in columns:
        by_name.setdefault(_header_name(c), c)
    return next((by_name[_header_name(n)] for n in names if _header_name(n) in by_name), None)


def _key_column(columns: Sequence[str], roles: dict[str, str], file: str | None) -> str | None:
    """The key column by its name: an English name by priority (``KEY_NAMES``), a Cyrillic one only where
    it is the one key-like name; several that none outranks stop with one line naming them."""
    cyrillic = [c for c in columns if _header_name(c) in CYRILLIC_KEY_NAMES]
    latin = _first(columns, KEY_NAMES)
    candidates = [*([latin] if latin else []), *cyrillic]
    if cyrillic and len(candidates) > 1:
        raise InputError(
            f"several columns could be the key: {candidates}; name it with {roles['key']}", file=file
        )
    return candidates[0] if candidates else None


def _option_columns(
    columns: Sequence[str], roles: dict[str, str] | None = None, file: str | None = None
) -> list[str]:
    """Columns named A, B, C... (or option_a.., choice1.., А, Б, В.., Варіант А..) in a run from the
    first: one option each. Runs in two alphabets (A..D and А..Г) are ambiguous: one line naming both."""
    found: dict[str, str] = {}
    for c in columns:
        m = _OPTION_COLUMN.match(c.strip())
        if m and not c.isdigit():  # a headerless file's "1", "2" are positions, not option names
            found.setdefault(m.group(1).lower(), c)
    runs: dict[str, list[str]] = {}
    for what, series in _OPTION_SERIES.items():
        run = []
        for name in series:
            if name not in found:
                break
            run.append(found[name])
        if len(run) >= 2:
            runs[what] = run
    letters = [w for w in ("Latin letters", "Cyrillic letters") if w in runs]
    if len(letters) > 1:
        named = " and ".join(f"{runs[w]} ({w})" for w in letters)
        how = (roles or CONFIG_ROLES)["options"]
        raise InputError(f"two runs of option columns, {named}; name the options with {how}", file=file)
    return next(iter(runs.values()), [])


def _rows_named(rows: Sequence[int], limit: int = 5) -> str:
    shown = ", ".join(str(r) for r in rows[:limit])
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def _guess_key_format(
    values: Sequence[Any], options: Sequence[Sequence[str]], *, file: str | None = None, key: str = "key"
) -> str:
    """From the key cells of the first rows: the key option's own text where every key is the text of
    exactly one of its row's options (checked before numbers are read as indices, so options "1".."4"
    keyed by text are not read as 1-based indices), integers (0-based unless no 0 and some key equals N),
    letters (a label), else text. Digits that name an option's text in some rows and, read as an index,
    another option there stop with one line naming those rows."""
    pairs = [(i, v, o) for i, (v, o) in enumerate(zip(values, options, strict=False), start=1)
             if v is not None and str(v).strip() != ""]  # fmt: skip
    present = [v for _, v, _ in pairs]
    if not present or any(isinstance(v, bool) or not isinstance(v, str | int) for v in present):
        return "index"  # no keys, or numbers that are not integers (1.5, true): the index check names them
    hits = [[j for j, t in enumerate(o) if str(t).strip() == str(v).strip()] for _, v, o in pairs]
    if all(len(h) == 1 for h in hits):
        return "text"  # every key is exactly one option's text: that, not a position or a letter
    if all((isinstance(v, int) and not isinstance(v, bool)) or str(v).strip().isdigit() for v in present):
        numbers = [int(str(v).strip()) for v in present]
        one_based = 0 not in numbers and any(k == len(o) for k, o in zip(numbers, options, strict=False))
        shift = 1 if one_based else 0
        clash = [row for (row, _, o), k, h in zip(pairs, numbers, hits, strict=True)
                 if h and (k - shift) not in h and o]  # fmt: skip
        if clash:
            raise InputError(
                f"column {key!r}: the keys are numbers that are also option texts, and read as "
                f"{'1-based' if one_based else '0-based'} indices name another option at rows "
                f"{_rows_named(clash)}; say which with key_format (text, index or index1)",
                file=file,
            )
        return "index1" if one_based else "index"
    if all(len(str(v).strip()) <= 2 and str(v).strip().isalpha() for v in present):
        return "label"
    return "text"


def guess_mapping(
    columns: Sequence[str],
    records: Sequence[dict[str, Any]] = (),
    *,
    header: bool,
    question: str | None = None,
    options: Sequence[str] = (),
    key: str | None = None,
    key_format: str | None = None,
    file: str | None = None,
    roles: dict[str, str] | None = None,
) -> tuple[dict[str, Any], str]:
    """``load_generic``'s column arguments, each given one kept and each missing one guessed from the
    column names (and the first ``records``' key cells), with one line saying what was guessed and how
    to override it ("" when nothing was). A headerless file follows MMLU's layout: question first, key
    last, the options between. ``roles`` names the overrides (the audit's options; by default the
    dataset config's keys)."""
    roles = roles or CONFIG_ROLES
    columns = [str(c) for c in columns]
    guessed: list[str] = []
    options = list(options)
    if not header:
        if len(columns) < 4:
            raise InputError(
                f"a headerless bank needs a question, two or more options and a key; "
                f"the first row has {len(columns)} columns",
                file=file,
            )
        question = question or columns[0]
        key = key or columns[-1]
        if not options:
            options = [c for c in columns if c not in (question, key)]
            guessed.append(f"options={options[0]}..{options[-1]} (MMLU's layout)")
        key_format = key_format or "label"
    if question is None:
        question = _first(columns, QUESTION_NAMES)
        if question is None:
            raise InputError(
                f"no question column among {columns}; name it with {roles['question']}", file=file
            )
        guessed.append(f"question={question}")
    if not options:
        lists = [c for c in columns if _header_name(c) in OPTIONS_NAMES or re.fullmatch(r"\d+_choices", c)]
        if len(lists) > 1 and not _first(lists, OPTIONS_NAMES):
            raise InputError(
                f"several option-list columns {lists}; name one with {roles['options']} and its key with "
                f"{roles['key']} (e.g. {lists[-1]} and {lists[-1]}_gold)",
                file=file,
            )
        chosen = _first(lists, OPTIONS_NAMES) or (lists[0] if lists else None)
        options = [chosen] if chosen else _option_columns(columns, roles, file)
        if not options:
            raise InputError(
                f"no options column (a list in {list(OPTIONS_NAMES)}, or columns A, B, C...) among "
                f"{columns}; name it with {roles['options']}",
                file=file,
            )
        guessed.append(f"options={options[0]}" + (f"..{options[-1]}" if len(options) > 1 else " (a list)"))
    if key is None:
        own = [f"{options[0]}_gold", f"{options[0]}_answer"] if len(options) == 1 else []
        key = _first(columns, own) or _key_column(columns, roles, file)
        if key is None:
            raise InputError(
                f"no key column among {columns} (tried {[*KEY_NAMES, *CYRILLIC_KEY_NAMES]}); name it with "
                f"{roles['key']}",
                file=file,
            )
        guessed.append(f"key={key}")
    given = [(roles["question"], question), (roles["key"], key), *((roles["options"], o) for o in options)]
    for role, column in given:
        if column not in columns:
            raise InputError(
                f"column {column!r} ({role}) is not in the file; it has columns {columns}", file=file
            )
    for i, (role, column) in enumerate(given):
        other = next((r for r, c in given[i + 1 :] if c == column), None)
        if other is not None:
            raise ConfigError("mapping", f"column {column!r} is given both as {role} and as {other}")
    if key_format is None:
        values = [_plain(r.get(key)) for r in records]
        cells = [r.get(options[0]) if len(options) == 1 else [r.get(c) for c in options] for r in records]
        option_lists = [o if isinstance(o, list | tuple) else _as_list(o) for o in cells]
        labelled = any(isinstance(_plain(c), dict) and "label" in c for c in cells)  # ARC: keys are labels
        key_format = "label" if labelled else _guess_key_format(values, option_lists, file=file, key=key)
        guessed.append(f"key format={key_format}")
    kwargs: dict[str, Any] = {"question": question, "key": key, "key_format": key_format}
    kwargs["options" if len(options) == 1 else "option_columns"] = (
        options[0] if len(options) == 1 else options
    )
    flags = "/".join(roles[r] for r in ("question", "options", "key", "key_format"))
    note = f"guessed {', '.join(guessed)}; override with {flags}" if guessed else ""
    return kwargs, note


def _as_list(value: Any) -> list[Any]:
    """A list cell as a list, for counting options (a JSON or Python literal in a text cell); else []."""
    value = _plain(value)
    if isinstance(value, dict):  # a struct cell {"text": [...], "label": [...]}
        value = value.get("text")
    if isinstance(value, str):
        for parse in (json.loads, ast.literal_eval):
            try:
                value = parse(value)
                break
            except (ValueError, SyntaxError):
                continue
    return list(value) if isinstance(value, list | tuple) else []


def peek(
    path: Path, fmt: str, header: bool, n: int = 50, limits: ReadLimits = READ_LIMITS
) -> tuple[list[str], list[dict[str, Any]]]:
    """The column names and the first ``n`` records of a bank (for guessing its mapping)."""
    records: list[dict[str, Any]] = []
    for _where, record in _rows(path, fmt, header, limits):
        records.append(record)
        if len(records) >= n:
            break
    columns = list(records[0]) if records else []
    return [str(c) for c in columns], records


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
    source: str = default(GenericDataset, "source"),
    bank: str | None = None,
    format: str | None = None,
    question: str | None = None,
    options: str | None = None,
    option_columns: Sequence[str] | None = None,
    key: str | None = None,
    key_format: str | None = None,
    labels: Sequence[str] | str | None = None,
    id: str | None = None,
    meta_columns: Sequence[str] | None = None,
    header: bool = default(GenericDataset, "header"),
    duplicates: str = default(GenericDataset, "duplicates"),
    notes: list[str] | None = None,
    limits: ReadLimits = READ_LIMITS,
) -> list[Item]:
    """Items of a bank in file order (see module docstring for the formats and the mapping).

    Whatever of ``question``/``options``/``key``/``key_format`` is not given is guessed
    (``guess_mapping``), and the guess is logged in one line naming the config keys that override it.
    ``header=False`` reads a CSV/TSV/XLSX whose first row is data; its columns are "0", "1", ...; a
    headerless CSV/TSV whose rows have different numbers of options reads when the key is last.
    A row repeating an earlier item (the same question, options and key) is dropped (``duplicates``
    "drop") or kept and flagged ``duplicate_item`` ("keep"); either way one line says which rows, logged
    and appended to ``notes`` when given. ``limits``: what is read at most (``ReadLimits``)."""
    path = Path(path)
    fmt = bank_format(path, format)
    if not path.exists():
        raise InputError("bank file not found", file=str(path))
    _check_mapping({"key_format": key_format or "index", "option_columns": option_columns,
                    **({"options": options} if options is not None else {})})  # fmt: skip
    if not header and fmt not in HEADERLESS_FORMATS:
        raise ConfigError(
            "dataset.header", f"only {'/'.join(HEADERLESS_FORMATS)} can lack a header; {path.name} is {fmt}"
        )
    given_options = [options] if options else list(option_columns or ())
    if question is None or key is None or key_format is None or not given_options:
        columns, records = peek(path, fmt, header, limits=limits)
        guessed, note = guess_mapping(
            columns, records, header=header, question=question, options=given_options, key=key,
            key_format=key_format, file=str(path),
        )  # fmt: skip
        if note:
            log.warning("%s: %s", path.name, note)
        question, key, key_format = guessed["question"], guessed["key"], guessed["key_format"]
        if not given_options:
            options, option_columns = guessed.get("options"), guessed.get("option_columns")
    assert question is not None and key is not None  # guess_mapping fills both or raises
    mapping: dict[str, Any] = {"key": key, "key_format": key_format, "labels": labels}
    if options is not None:
        mapping["options"] = options
    if option_columns is not None:
        mapping["option_columns"] = list(option_columns)
    _check_mapping(mapping)
    if duplicates not in DUPLICATES:
        raise ConfigError("dataset.duplicates", f"expected one of {list(DUPLICATES)}, got {duplicates!r}")
    ragged = _ragged(path, fmt, header)
    if ragged and (key != ragged or option_columns is None):
        raise InputError(
            f"rows have different numbers of fields (first: {ragged}); a headerless bank reads so only with "
            "the question first and the key last (no --key/--options given)",
            file=str(path),
        )
    bank = bank or (path.name if path.is_dir() else path.stem)
    file = str(path)
    used = {question, key, id, options or "options", *(option_columns or ())}
    items: list[Item] = []
    seen: dict[str, str] = {}
    scripts: dict[str, str] = {}  # key alphabet -> the first row that used it (label keys)
    unread: list[tuple[str, InputError]] = []  # rows whose key does not read in the key format
    # an item's content (its digest: a normalised copy of every text held a big bank twice) -> the row
    # that first held it
    first_of: dict[bytes, str] = {}
    repeated: list[tuple[str, str]] = []
    for row_number, (where, record) in enumerate(_rows(path, fmt, header, limits), start=1):
        stem = _cell(record, question, where, file)
        if not isinstance(stem, str):
            raise InputError(f"{where}, column {question!r}: expected text, got {stem!r}", file=file)
        opts, own_labels = _options(record, mapping, where, file)
        raw_key = _cell(record, key, where, file)
        try:
            key_index = _key(raw_key, opts, mapping, where, file, own_labels)
        except InputError as exc:  # every row is checked, then one line names those whose key fails
            unread.append((where, exc))
            continue
        if mapping.get("key_format") == "label" and not mapping.get("labels") and not own_labels:
            scripts.setdefault(key_alphabet(str(raw_key)), where)
            if len(scripts) > 1:
                first = ", ".join(f"{SCRIPT_NAMES[a]} at {w}" for a, w in scripts.items())
                why = (
                    "since look-alikes such as B and В name different options"
                    if NUMERALS not in scripts
                    else "since a file keyed in one scheme does not switch to another"
                )
                what = "Latin and Cyrillic letters" if NUMERALS not in scripts else "letters and numerals"
                raise InputError(
                    f"the key labels mix {what} ({first}); give the alphabet in the dataset config's "
                    f"labels, {why}",
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
        texts = [" ".join(stem.split()).casefold(), [" ".join(o.split()).casefold() for o in opts], key_index]
        content = hashlib.blake2b(json.dumps(texts, ensure_ascii=False).encode(), digest_size=16).digest()
        if content in first_of:
            repeated.append((where, first_of[content]))
            if duplicates == "drop":
                continue
            flags.append("duplicate_item")
        first_of.setdefault(content, where)
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
    if repeated:
        shown = ", ".join(f"{w} (= {first})" for w, first in repeated[:5])
        more = f" and {len(repeated) - 5} more" if len(repeated) > 5 else ""
        fate = (
            "dropped (dataset.duplicates: keep, or --keep-duplicates, keeps them)"
            if duplicates == "drop"
            else "kept, flagged duplicate_item"
        )
        line = (
            f"{len(repeated)} of {row_number} rows repeat an earlier item (same question, options and key): "
            f"{shown}{more}; {fate}"
        )
        log.warning("%s: %s", path.name, line)
        if notes is not None:
            notes.append(line)
    if unread:
        first = str(unread[0][1]).removeprefix(f"file {file}: ")
        rows = [w for w, _ in unread]
        raise InputError(
            f"{first}; {len(unread)} of {len(unread) + len(items)} rows have a key that does not read as "
            f"key_format {mapping.get('key_format')} ({_rows_named(rows)}): set key_format (and key)",
            file=file,
        )
    return items
