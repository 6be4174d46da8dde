"""``blindmcq import lm-eval SAMPLES.jsonl`` / ``blindmcq import inspect LOG``: a harness's answers to an
exported probe -> blindmcq's predictions format (``schema_version`` 1, docs/predictions.md).

Each answer is parsed and scored as blindmcq's own probe scores it (``documents.record_of``): lm-eval's
label log-likelihoods by their argmax (an exact tie is ``tie``), inspect's completion by blindmcq's
parser. ``--out`` takes ``.parquet`` or ``.jsonl``; list the file under ``analysis.extra_predictions``
for the pipeline's analysis and report, or put it at ``results/predictions/predictions.parquet`` to gate
on it. ``--audit DIR`` also writes the audit report (``report.md``, ``index.html``, ``metrics.json``)
for the bank the export wrote (``--export DIR``, default: the folder beside the task's data).

Every answer is checked against the export's ``manifest.json`` first (``read_manifest``): its item must
be one the export probed, with the same option texts, and its ``key_slot`` must be where that item's key
sits in the document's order; ``items.jsonl`` must be the file the export wrote (its sha256). A log
edited to move a key to the model's pick, or answering another bank, is refused in one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.answers.predictions import to_frame, to_table
from blindmcq.answers.records import PredictionRecord
from blindmcq.datasets.items import Item
from blindmcq.errors import InputError
from blindmcq.harnesses.documents import HARNESSES, BankKey


def import_predictions(
    harness: str,
    path: Path,
    *,
    model: str | None,
    symbols: Mapping[str, Sequence[str]],
    bank: Mapping[str, BankKey],
) -> pd.DataFrame:
    """The predictions frame of a harness's log of an exported probe, each document checked against
    ``bank`` (``read_manifest`` of the export)."""
    records: list[PredictionRecord]
    if harness == "lm-eval":
        from blindmcq.harnesses.lm_eval import model_name_of, read_samples

        name = model or model_name_of(path)
        records = read_samples(path, model=name or "", symbols=symbols, bank=bank)  # its rows checked first
        if not name or _is_path(name):
            said = f"names the model by a local path ({name})" if name else "names no model"
            raise InputError(
                f"lm-eval's results file beside the samples {said}; give --model NAME", file=str(path)
            )
    elif harness == "inspect":
        from blindmcq.harnesses.inspect_task import read_log

        records = read_log(path, model=model, symbols=symbols, bank=bank)
    else:
        raise InputError(f"unknown harness {harness!r} (one of {HARNESSES})")
    return to_frame(to_table(records))


def _is_path(name: str) -> bool:
    """A model named by a checkpoint folder (``pretrained=/tmp/qdpv68r5``), not by a model id."""
    return name.startswith(("/", "./", "../", "~")) or Path(name).exists()


def read_manifest(export_dir: Path) -> dict[str, BankKey]:
    """Per probed item id, the key and option-text hash the export's ``manifest.json`` holds, after
    checking that ``items.jsonl`` beside it is the file the export wrote (its sha256)."""
    manifest = Path(export_dir) / "manifest.json"
    if not manifest.is_file():
        raise InputError("no manifest.json: not a folder `blindmcq export` wrote (give --export DIR)",
                         file=str(export_dir))  # fmt: skip
    try:
        data: Any = json.loads(manifest.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as exc:
        raise InputError(f"not valid JSON ({type(exc).__name__})", file=str(manifest)) from None
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, dict) or not isinstance(data.get("items_sha256"), str):
        raise InputError("no keys or items_sha256: re-export the task with this blindmcq", file=str(manifest))
    items = Path(export_dir) / "items.jsonl"
    if not items.is_file() or hashlib.sha256(items.read_bytes()).hexdigest() != data["items_sha256"]:
        raise InputError("items.jsonl is not the file the export wrote (field items_sha256 differs)",
                         file=str(items))  # fmt: skip
    bank: dict[str, BankKey] = {}
    for item_id, entry in keys.items():
        key = entry.get("key") if isinstance(entry, dict) else "?"
        digest = entry.get("options_sha256") if isinstance(entry, dict) else None
        if (key is not None and (isinstance(key, bool) or not isinstance(key, int))) or not isinstance(
            digest, str
        ):
            raise InputError(
                f"keys[{item_id!r:.60}]: field key or options_sha256 is malformed", file=str(manifest)
            )
        bank[item_id] = BankKey(key=key, options_sha256=digest)
    return bank


def export_key_labels(export_dir: Path) -> list[str]:
    """The bank's own label of each slot, as the export's ``manifest.json`` records them (``key_labels``;
    none, slots by position, for an export of a corpus or one written before the field)."""
    try:
        data = json.loads((Path(export_dir) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []  # read_manifest names what is wrong with it
    labels = data.get("key_labels") if isinstance(data, dict) else None
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        return []
    return labels


def export_items(export_dir: Path) -> list[Item]:
    """The bank an export wrote (``items.jsonl`` beside its ``manifest.json``, ``read_manifest`` checks
    it is the file the export wrote)."""
    from blindmcq.datasets.items import read_items

    read_manifest(export_dir)
    return read_items(Path(export_dir) / "items.jsonl")
