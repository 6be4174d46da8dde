"""The one way to read a Commission-style PDF bank: ``read_pdf_bank(dataset)``.

The corpus stage (:func:`blindmcq.datasets.build.read_dataset`), ``load_dataset`` (loader ``pdf``), the
capacity planner's sample and ``blindmcq preview`` all come here, so each sees the same items: both
extraction paths settled and the reviewed corrections applied (``dataset.corrections``; by default the
committed ``defaults/corrections.yaml``). The settings are the ``pdf`` dataset group's
(:class:`blindmcq.config.schema.PdfDataset`); its defaults live in the schema.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blindmcq.config.schema import PdfDataset, validate_group
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError

DEFAULT_CORRECTIONS = Path("defaults/corrections.yaml")


def _root(root: str | Path | None) -> Path:
    return Path() if root is None else Path(root)


def pdf_paths(dataset: Mapping[str, Any], root: str | Path | None = None) -> list[Path]:
    """The PDFs ``paths`` (globs) or ``path`` name, relative to ``root`` (default: the working directory)."""
    patterns = dataset.get("paths") or ([dataset["path"]] if dataset.get("path") else [])
    patterns = [patterns] if isinstance(patterns, str) else patterns
    base = _root(root)
    found = sorted({Path(p) for pattern in patterns for p in glob.glob(str(base / str(pattern)))})
    if not found:
        raise ConfigError("dataset.paths", f"no PDF matches {patterns}")
    return found


def corrections_path(dataset: Mapping[str, Any], root: str | Path | None = None) -> Path | None:
    """``dataset.corrections`` (null: none); by default the committed reviewed corrections, when present."""
    base = _root(root)
    if "corrections" in dataset:
        return base / str(dataset["corrections"]) if dataset["corrections"] else None
    return base / DEFAULT_CORRECTIONS if (base / DEFAULT_CORRECTIONS).is_file() else None


def _pdf_group(dataset: Mapping[str, Any]) -> PdfDataset:
    typed = validate_group("dataset", {**dataset, "loader": "pdf"})
    assert isinstance(typed, PdfDataset)
    return typed


def expected_options(dataset: Mapping[str, Any]) -> int:
    """``dataset.n_options``: the options every item of the bank should have (null: the Commission's 4).

    The extractor checks each item against it and uses it to settle option rows split by a page break."""
    from blindmcq.corpus.extract import N_OPTIONS

    # the schema's one check (a whole number of at least 2), also for a dataset handed in directly
    value = _pdf_group(dataset).n_options
    return N_OPTIONS if value is None else value


def read_pdf_bank(
    dataset: Mapping[str, Any], *, root: str | Path | None = None, seed: int | None = None
) -> tuple[list[Item], dict[str, Any]]:
    """The bank's items (corrections applied) and the verification report. ``seed`` draws the report's
    pilot sample (default the dataset's own ``seed``; the corpus stage passes the run's)."""
    from blindmcq.corpus.extract import extract_items

    cfg = _pdf_group(dataset)
    optional = {"workers": cfg.workers, "pilot_per_bank": cfg.pilot_per_bank}
    return extract_items(
        pdf_paths(dataset, root),
        source=cfg.source,
        bank=cfg.bank,
        n_options=expected_options(dataset),
        seed=cfg.seed if seed is None else seed,
        corrections=corrections_path(dataset, root),
        **{k: v for k, v in optional.items() if v is not None},  # unset: the extractor's own default
    )
