"""Build a corpus (``items.jsonl``, ``verification.json`` and the dataset config's ``fingerprint.json``) from
any dataset config: what the corpus stage runs, and what a sweep or ``blindmcq preview`` runs when the
pipeline's corpus was built from another config (:mod:`blindmcq.datasets.fingerprint`)."""

from __future__ import annotations

import glob
import json
from collections import Counter
from pathlib import Path
from typing import Any

from blindmcq import paths
from blindmcq.atomic import write_text
from blindmcq.datasets.items import write_items
from blindmcq.errors import ConfigError


def pdf_paths(dataset: dict[str, Any]) -> list[Path]:
    patterns = dataset.get("paths") or ([dataset["path"]] if dataset.get("path") else [])
    found = sorted({Path(p) for pattern in patterns for p in glob.glob(str(pattern))})
    if not found:
        raise ConfigError("dataset.paths", f"no PDF matches {patterns}")
    return found


DEFAULT_CORRECTIONS = Path("defaults/corrections.yaml")


def corrections_path(dataset: dict[str, Any]) -> Path | None:
    """``dataset.corrections`` (null: none); by default the committed reviewed corrections, when present."""
    if "corrections" in dataset:
        return Path(dataset["corrections"]) if dataset["corrections"] else None
    return DEFAULT_CORRECTIONS if DEFAULT_CORRECTIONS.is_file() else None


def expected_options(dataset: dict[str, Any]) -> int:
    """``dataset.n_options``: the options every item of the bank should have (null: the Commission's 4).

    The extractor checks each item against it and uses it to settle option rows split by a page break."""
    from blindmcq.config.schema import validate_group
    from blindmcq.corpus.extract import N_OPTIONS

    # the schema's one check (a whole number of at least 2), also for a dataset handed in directly
    value = validate_group("dataset", dataset).n_options
    return N_OPTIONS if value is None else value


def build_corpus(dataset: dict[str, Any], out_dir: Path, seed: int = 0) -> dict[str, Any]:
    """Write items.jsonl and verification.json for any dataset config; returns the verification report."""
    from blindmcq.datasets.fingerprint import FINGERPRINT_NAME, write_fingerprint

    (Path(out_dir) / FINGERPRINT_NAME).unlink(missing_ok=True)  # a failed build leaves no stale claim
    if dataset.get("loader") == "pdf":
        from blindmcq.corpus.extract import extract_pdfs

        report = extract_pdfs(
            pdf_paths(dataset),
            out_dir,
            source=dataset.get("source", "vkks"),
            bank=dataset.get("bank"),
            n_options=expected_options(dataset),
            seed=seed,
            corrections=corrections_path(dataset),
        )
        write_fingerprint(out_dir, dataset, seed)  # which config these items come from (read by consumers)
        return report
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
    write_items(out_dir / paths.ITEMS.name, items)
    write_text(out_dir / paths.VERIFICATION.name, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    write_fingerprint(out_dir, dataset, seed)  # which config these items come from (read by consumers)
    return report
