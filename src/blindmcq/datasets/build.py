"""Build a corpus (``items.jsonl``, ``verification.json`` and the dataset config's ``fingerprint.json``) from
any dataset config: what the corpus stage runs, and what a sweep or ``blindmcq preview`` runs when the
pipeline's corpus was built from another config (:mod:`blindmcq.datasets.fingerprint`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from blindmcq import paths
from blindmcq.atomic import write_text
from blindmcq.datasets.items import Item, write_items
from blindmcq.datasets.pdf import (  # noqa: F401  (re-exported: the corpus stage's helpers)
    DEFAULT_CORRECTIONS,
    corrections_path,
    expected_options,
    pdf_paths,
    read_pdf_bank,
)


def read_dataset(dataset: dict[str, Any], seed: int = 0) -> tuple[list[Item], dict[str, Any]]:
    """The items of any dataset config and their verification report: the corpus stage's way (a PDF
    bank through :func:`blindmcq.datasets.pdf.read_pdf_bank`, corrections applied; any other loader
    through ``load_dataset``)."""
    if dataset.get("loader") == "pdf":
        return read_pdf_bank(dataset, seed=seed)
    from blindmcq.datasets.registry import load_dataset

    items = load_dataset(dataset)
    report = {
        "source": dataset.get("name"),
        "loader": dataset.get("loader"),
        "n_items": len(items),
        "status": dict(Counter(item.status for item in items)),
        "flags": dict(Counter(flag for item in items for flag in item.flags)),
        "note": "read from a structured bank file: a single extraction path, nothing to cross-check",
    }
    return items, report


def build_corpus(dataset: dict[str, Any], out_dir: Path, seed: int = 0) -> dict[str, Any]:
    """Write items.jsonl and verification.json for any dataset config; returns the verification report."""
    from blindmcq.datasets.fingerprint import FINGERPRINT_NAME, write_fingerprint

    out = Path(out_dir)
    (out / FINGERPRINT_NAME).unlink(missing_ok=True)  # a failed build leaves no stale claim
    items, report = read_dataset(dataset, seed)  # nothing is written unless the whole bank reads
    write_items(out / paths.ITEMS.name, items)
    write_text(out / paths.VERIFICATION.name, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    write_fingerprint(out, dataset, seed)  # which config these items come from (read by consumers)
    return report
