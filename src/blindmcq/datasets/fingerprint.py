"""The corpus remembers the dataset config it was built from; every reader of the items checks it.

The corpus stage writes ``results/corpus/fingerprint.json`` beside ``items.jsonl``: the sha256 of the
``dataset`` config (canonical JSON, and the run's ``seed`` for the PDF loader, whose extraction uses it).
A consumer that reads the items under a config of its own (a sweep, ``blindmcq preview``) compares that
config's fingerprint with the file's: the items of another dataset config (a sweep with
``dataset.n_test=30 dataset.seed=7`` over a corpus built with the defaults) are never used as if they
were this config's. The sweep and preview rebuild the corpus for their config (into the job's own
folder, or a temporary one), saying so in one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blindmcq.config.schema import validate, validate_group
from blindmcq.errors import ConfigError

FINGERPRINT_NAME = "fingerprint.json"
# keys that say how the bank is named, not which items it yields: never in the fingerprint
WORDING_KEYS = ("subject", "description")


def dataset_fingerprint(dataset: Mapping[str, Any], seed: int = 0) -> str:
    """sha256 of the dataset config as ``params.yaml`` holds it (and ``seed`` for the PDF loader): the
    mapping as written, so a default added to the schema changes no fingerprint; the bank's wording
    (``WORDING_KEYS``) left out, as it changes no item."""
    payload: dict[str, Any] = {"dataset": {k: v for k, v in dataset.items() if k not in WORDING_KEYS}}
    if validate_group("dataset", dataset).loader == "pdf":
        payload["seed"] = int(seed)
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _dataset(params: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None, int]:
    """The composed config's dataset mapping (hashed as written), its name and the run's seed."""
    config = validate(params, file=None)
    if config.dataset is None:
        raise ConfigError("dataset", "missing: the corpus is built from a dataset config")
    # an unnamed config is null in fingerprint.json (the schema's name default is "")
    return params["dataset"], config.dataset.name or None, config.seed


def params_fingerprint(params: Mapping[str, Any]) -> str:
    dataset, _name, seed = _dataset(params)
    return dataset_fingerprint(dataset, seed)


def write_fingerprint(out_dir: Path, dataset: Mapping[str, Any], seed: int = 0) -> Path:
    from blindmcq.atomic import write_text

    path = Path(out_dir) / FINGERPRINT_NAME
    name = validate_group("dataset", dataset).name or None  # null when unnamed, as before the schema
    record = {"dataset": name, "fingerprint": dataset_fingerprint(dataset, seed)}
    write_text(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def corpus_mismatch(params: Mapping[str, Any], items_path: Path) -> str | None:
    """None when the corpus beside ``items_path`` was built from ``params``'s dataset config; else why
    not, in a few words."""
    path = Path(items_path).parent / FINGERPRINT_NAME
    if not Path(items_path).is_file():
        return f"no {items_path}"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{items_path} has no {FINGERPRINT_NAME} (built before corpora were fingerprinted)"
    except (OSError, ValueError) as exc:
        return f"{path} is unreadable ({exc})"
    built = record.get("fingerprint") if isinstance(record, dict) else None
    if built == params_fingerprint(params):
        return None
    name = record.get("dataset") if isinstance(record, dict) else None
    _dataset_cfg, wanted, _seed = _dataset(params)
    if name == wanted:
        return f"{items_path} was built from another dataset config ('{name}' with other settings)"
    return f"{items_path} was built from another dataset config ('{name}', not '{wanted}')"
