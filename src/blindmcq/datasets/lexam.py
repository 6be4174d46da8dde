"""LEXam's multiple-choice test split and its option-count perturbations (Swiss law, German/English).

- ``MCQs_test.xlsx``: 1,660 four-option items; ``choices`` is a Python-list literal, ``gold`` 0-based.
  Bank ``test``.
- ``MCQs_test_perturbation.xlsx``: 385 other items, each in a 4-, 8-, 16- and 32-option version
  (columns ``{N}_choices``, ``{N}_choices_gold``). Bank ``perturbation-{N}``.

The number is the 1-based data row in the file (LEXam's own ids are UUIDs, kept in
``meta["lexam_id"]``), so the N-option versions of one question share a number across banks.
Every other column is kept in ``meta``.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.config.schema import LexamDataset, default
from blindmcq.datasets.items import Item, invariant_flags, item_id
from blindmcq.errors import ConfigError, InputError

SOURCE = "lexam"


def _read(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise InputError("LEXam file not found", file=str(path))
    try:
        return pd.read_excel(path, sheet_name=0)
    except Exception as exc:  # openpyxl raises several unrelated types for a broken workbook
        raise InputError(f"cannot read workbook: {exc}", file=str(path)) from exc


def _plain(value: Any) -> Any:
    """JSON-friendly scalar: numpy types to Python, NaN to None."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _columns(frame: pd.DataFrame, n_options: int, file: str) -> tuple[str, str, str]:
    """(choices column, gold column, bank) for the file's layout and the wanted N."""
    if "choices" in frame.columns and "gold" in frame.columns:
        if n_options != 4:
            raise ConfigError(
                "dataset.n_options",
                f"{file} has only the 4-option split; use MCQs_test_perturbation.xlsx for {n_options}",
            )
        return "choices", "gold", "test"
    choices, gold = f"{n_options}_choices", f"{n_options}_choices_gold"
    if choices in frame.columns and gold in frame.columns:
        return choices, gold, f"perturbation-{n_options}"
    available = sorted(int(c.split("_")[0]) for c in frame.columns if c.endswith("_choices"))
    if not available:
        raise InputError("neither 'choices'/'gold' nor '{N}_choices'/'{N}_choices_gold' columns", file=file)
    raise ConfigError("dataset.n_options", f"{file} has no {n_options}-option version; it has {available}")


def load_lexam(path: str | Path, *, n_options: int = default(LexamDataset, "n_options")) -> list[Item]:
    """Items of a LEXam workbook in file order; ``n_options`` picks the perturbation version."""
    path = Path(path)
    frame = _read(path)
    file = path.name
    choices_col, gold_col, bank = _columns(frame, n_options, file)
    meta_cols = [
        c for c in frame.columns if c not in ("question", "id") and not c.endswith(("choices", "gold"))
    ]
    items: list[Item] = []
    for index, row in enumerate(frame.itertuples(index=False), start=1):
        record = dict(zip(frame.columns, row, strict=True))
        where = f"row {index}"  # 1-based data row; the header is spreadsheet row 1
        try:
            options = ast.literal_eval(record[choices_col])
        except (ValueError, SyntaxError) as exc:
            raise InputError(
                f"{where}, column {choices_col!r}: not a Python list literal ({exc})", file=file
            ) from exc
        if not isinstance(options, list | tuple) or not all(isinstance(o, str) for o in options):
            raise InputError(f"{where}, column {choices_col!r}: expected a list of strings", file=file)
        gold = _plain(record[gold_col])
        if not isinstance(gold, int) or not 0 <= gold < len(options):
            raise InputError(
                f"{where}, column {gold_col!r}: {gold!r} is not an index of {len(options)} options", file=file
            )
        flags = invariant_flags(options, [gold], n_options)
        key = None if "invariant" in flags else gold
        items.append(
            Item(
                id=item_id(SOURCE, bank, index),
                source=SOURCE,
                bank=bank,
                number=index,
                question=str(record["question"]),
                options=tuple(options),
                key=key,
                status="ok" if key is not None else "malformed",
                flags=tuple(flags),
                file=file,
                meta={"lexam_id": _plain(record.get("id")), **{c: _plain(record[c]) for c in meta_cols}},
            )
        )
    return items
