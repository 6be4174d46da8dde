"""The corpus remembers the dataset config and the bank files it was built from; readers check both.

The corpus stage writes ``results/corpus/fingerprint.json`` beside ``items.jsonl``: the sha256 of the
``dataset`` config (canonical JSON, and the run's ``seed`` for the PDF loader, whose extraction uses it)
and of the bytes of every file the dataset reads (``datasets.registry.bank_files``: the bank's files, a
PDF bank's reviewed corrections; none for a generated bank), each file's own sha256 listed beside it. A
consumer that reads the items under a config of its own (a sweep, ``blindmcq preview``) compares
(``datasets.registry.corpus_mismatch``): the items of another dataset config (a sweep with
``dataset.n_test=30 dataset.seed=7`` over a corpus built with the defaults), or of a bank file edited
since under the same config, are never used as if they were this config's. The sweep and preview
rebuild the corpus for their config (into the job's own folder, or a temporary one), saying so in one
line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from blindmcq.config.schema import Config, as_written, default, validate_group
from blindmcq.errors import ConfigError, InputError

FINGERPRINT_NAME = "fingerprint.json"
# keys that say how the bank is named, not which items it yields: never in the fingerprint
WORDING_KEYS = ("subject", "description")


def file_digests(files: Sequence[Path], root: Path | None = None) -> dict[str, str]:
    """sha256 of each file's bytes, by its path relative to ``root`` (posix), in the order given."""
    out: dict[str, str] = {}
    for path in files:
        try:
            with Path(path).open("rb") as fh:
                digest = hashlib.file_digest(fh, "sha256")
        except OSError as exc:
            raise InputError(f"cannot read the bank file ({exc.strerror or exc})", file=str(path)) from exc
        name = Path(path)
        if root is not None and name.is_relative_to(root):
            name = name.relative_to(root)
        out[name.as_posix()] = digest.hexdigest()
    return out


def dataset_fingerprint(
    dataset: Mapping[str, Any], seed: int = default(Config, "seed"), files: Mapping[str, str] | None = None
) -> str:
    """sha256 of the dataset config as ``params.yaml`` holds it (and ``seed`` for the PDF loader): the
    mapping as written, so a default added to the schema changes no fingerprint, the bank's wording
    (``WORDING_KEYS``) left out, as it changes no item; and of ``files`` (path -> sha256,
    ``file_digests``), the bank files the config reads, when there are any."""
    payload: dict[str, Any] = {"dataset": {k: v for k, v in dataset.items() if k not in WORDING_KEYS}}
    if validate_group("dataset", dataset).loader == "pdf":
        payload["seed"] = int(seed)
    if files:
        payload["files"] = [[name, digest] for name, digest in files.items()]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def params_dataset(config: Config) -> tuple[Mapping[str, Any], str | None, int]:
    """The composed config's dataset mapping (hashed as written), its name and the run's seed."""
    if config.dataset is None:
        raise ConfigError("dataset", "missing: the corpus is built from a dataset config")
    # an unnamed config is null in fingerprint.json (the schema's name default is "")
    return as_written(config, "dataset"), config.dataset.name or None, config.seed


def write_fingerprint(
    out_dir: Path, dataset: Mapping[str, Any], seed: int, files: Mapping[str, str] | None = None
) -> Path:
    """``fingerprint.json`` in ``out_dir``: the dataset's name, its fingerprint and the file digests."""
    from blindmcq.atomic import write_text

    path = Path(out_dir) / FINGERPRINT_NAME
    name = validate_group("dataset", dataset).name or None  # null when unnamed (the schema's default is "")
    record: dict[str, Any] = {"dataset": name, "fingerprint": dataset_fingerprint(dataset, seed, files)}
    if files:
        record["files"] = dict(files)
    write_text(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def read_fingerprint(items_path: Path) -> dict[str, Any] | str:
    """The record beside ``items_path``, or why there is none to compare with, in a few words."""
    path = Path(items_path).parent / FINGERPRINT_NAME
    if not Path(items_path).is_file():
        return f"no {items_path}"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{items_path} has no {FINGERPRINT_NAME} (built before corpora were fingerprinted)"
    except (OSError, ValueError) as exc:
        return f"{path} is unreadable ({exc})"
    return record if isinstance(record, dict) else f"{path} is not a JSON object"


def mismatch(
    record: Mapping[str, Any], items_path: Path, config: Config, files: Mapping[str, str]
) -> str | None:
    """None when ``record`` is the fingerprint of ``params``'s dataset config over ``files``; else why
    not, in a few words (a bank file edited since, or another config)."""
    dataset, wanted, seed = params_dataset(config)
    if record.get("fingerprint") == dataset_fingerprint(dataset, seed, files):
        return None
    built_files = record.get("files")
    built_files = built_files if isinstance(built_files, dict) else {}
    changed = [n for n in files if built_files.get(n) != files[n]] + sorted(set(built_files) - set(files))
    name = record.get("dataset")
    if name == wanted and changed and built_files:
        return f"{items_path} was built from other bank files ({changed[0]} changed since)"
    if name == wanted and changed and not built_files and files:
        return f"{items_path} does not record the bank files it was built from"
    if name == wanted:
        return f"{items_path} was built from another dataset config ('{name}' with other settings)"
    return f"{items_path} was built from another dataset config ('{name}', not '{wanted}')"
