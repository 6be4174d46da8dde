"""Write files all-or-nothing: to a temporary file beside the target, then rename. Also the one way the
tool writes a table for spreadsheets (``csv_text``/``write_csv``), with formula prefixes neutralised."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# A text cell starting with one of these is read as a formula by Excel, LibreOffice and Google Sheets
# (OWASP, "CSV Injection"): an option text "=HYPERLINK(...)" must reach a reader as text.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path; on success it replaces ``target``, on error it is removed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    except OSError as exc:
        if exc.filename is None:  # pyarrow's write names no file (a full disk): the target is the one
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise
    finally:
        tmp_path.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(target: str | os.PathLike[str], text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(target: str | os.PathLike[str], data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def replace_tree(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Copy folder ``source`` to ``target``, replacing it only once the copy is complete.

    The copy is built in a temporary folder beside ``target`` and swapped in by renames, so a failed
    copy leaves the old ``target`` as it was (a report never links to images that were deleted)."""
    import shutil

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    old = tmp.with_suffix(".old")
    try:
        shutil.copytree(source, tmp, dirs_exist_ok=True)
        if target.exists():
            os.replace(target, old)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def neutralise_cell(value: Any) -> Any:
    """``value`` as a spreadsheet shows it as text: a string starting with a formula prefix gets a
    leading ``'`` (the dash label ``-`` becomes ``'-``); a number, or a string that is one (``-0.25``),
    and every other value stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _is_number(value):
        return "'" + value
    return value


def neutralise_frame(frame: Any) -> Any:
    """A copy of a pandas frame with every text cell and column name through ``neutralise_cell``; numeric
    columns are not touched."""
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        series = out[column]
        dtype = series.dtype
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            out[column] = series.astype(object).map(neutralise_cell)
        elif isinstance(dtype, pd.CategoricalDtype):
            out[column] = series.cat.rename_categories([neutralise_cell(c) for c in dtype.categories])
    out.columns = [neutralise_cell(c) for c in out.columns]
    return out


CSV_FLOAT_FORMAT = "%.12g"  # far above the last-bit noise of another CPU's SIMD sums (docs/cache.md)


def csv_text(frame: Any) -> str:
    """A pandas frame as the CSV text every CSV of the tool is written with: no index, formula
    prefixes neutralised (``neutralise_frame``), floats at 12 significant digits, so that the same
    figures write the same bytes on a CPU whose sums differ in the last bits."""
    return str(neutralise_frame(frame).to_csv(index=False, float_format=CSV_FLOAT_FORMAT))


def write_csv(target: str | os.PathLike[str], frame: Any) -> None:
    """``csv_text(frame)`` written all-or-nothing to ``target``."""
    write_text(target, csv_text(frame))
