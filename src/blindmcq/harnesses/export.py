"""``blindmcq export lm-eval|inspect BANK --out DIR``: the blind probe of a bank as a harness task.

BANK is a blindmcq corpus (``results/corpus/items.jsonl``) or any bank ``blindmcq audit`` reads (CSV,
JSONL, Parquet; the same ``--no-header/--question/--options/--key/--key-format`` mapping, so the items
get the same ids). The probe's seeded sample (``--sample``, ``--seed``: the probe config's 60 and 0) is
presented as ``blindmcq.tasks.probe`` presents it under the named phrasing, labels, reasoning,
condition and protocol (``conf/<group>/<name>.yaml``), or under those of a composed ``--params
params.yaml``: blind over the 2N orders, full, forced placement. DIR gets the harness's task files,
``items.jsonl`` (the bank's items, for the audit report of imported answers) and ``manifest.json``
(the configuration, the sha256 of ``items.jsonl`` and, per probed item id, its key and the sha256 of its
option texts: what ``blindmcq import`` checks every answer against).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from blindmcq import __version__
from blindmcq.atomic import write_text
from blindmcq.config.schema import validate_group
from blindmcq.datasets.items import Item, read_items, write_items
from blindmcq.errors import InputError
from blindmcq.harnesses.documents import ProbeConfig, build_documents, options_hash
from blindmcq.labels import label_symbols_by_scheme
from blindmcq.tasks.probe import sample_items

GROUPS = ("prompt", "labels", "reasoning", "condition", "protocol")
MANIFEST = "manifest.json"


def is_corpus(path: Path) -> bool:
    """A blindmcq corpus file: JSON lines whose first record has an ``id``, ``options`` and a ``status``."""
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    return isinstance(record, dict) and {"id", "options", "status"} <= set(record)
    except (OSError, ValueError):
        return False
    return False


def load_bank(path: Path, mapping: Any, labels: list[str] | None = None) -> list[Item]:
    """The bank's items: a corpus as written, any other bank through ``blindmcq audit``'s mapping (which
    appends the labels its keys are written in, one per slot, to ``labels``; a corpus has none)."""
    if is_corpus(path):
        return read_items(path)
    from blindmcq.auditing.audit import read_bank

    notes: list[str] = []
    items, _, note = read_bank(path, mapping, notes, labels)  # the audit's own reader: ids as the audit's
    for line in [note, *notes]:
        if line:
            print(line, file=sys.stderr)
    return items


def export(
    harness: str,
    bank: Path,
    out: Path,
    *,
    config: ProbeConfig,
    mapping: Any,
    sample: int | None,
    seed: int,
    task: str | None = None,
) -> list[Path]:
    """Write the harness task for the probe of ``bank``; returns the files written."""
    from blindmcq.auditing.audit import check_out_dir

    bank, out = Path(bank), Path(out)
    check_out_dir(out)
    key_labels: list[str] = []
    items = load_bank(bank, mapping, key_labels)
    if not any(item.usable for item in items):
        raise InputError("no usable item (every item is malformed or has no key)", file=str(bank))
    probed = sample_items(items, sample, seed, key="--sample")
    docs = build_documents(probed, config, harness)
    out.mkdir(parents=True, exist_ok=True)
    if harness == "lm-eval":
        from blindmcq.harnesses.lm_eval import DEFAULT_TASK, write_task

        files = write_task(out, docs, task=task or DEFAULT_TASK)
    else:
        from blindmcq.harnesses.inspect_task import DEFAULT_TASK as INSPECT_TASK
        from blindmcq.harnesses.inspect_task import write_task as write_inspect

        files = write_inspect(out, docs, task=task or INSPECT_TASK, symbols=symbols_of(config))
    write_items(out / "items.jsonl", items)
    manifest = {
        "blindmcq": __version__,
        "harness": harness,
        "bank": str(bank),
        "config": config.names(),
        "bank_words": dict(validate_group("prompt", config.prompt).bank),  # how the prompt names the bank
        "sample": sample,
        "seed": seed,
        "items": len(items),
        "probed_items": [item.id for item in probed],
        # what an import checks its answers against (harnesses.importing.read_manifest)
        "items_sha256": hashlib.sha256((out / "items.jsonl").read_bytes()).hexdigest(),
        "keys": {item.id: {"key": item.key, "options_sha256": options_hash(item.options)} for item in probed},
        "documents": len(docs),
        "symbols": symbols_of(config),
        "key_labels": key_labels,  # the bank's own label of each slot, which the audit report names slots by
    }
    write_text(out / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return [*files, out / "items.jsonl", out / MANIFEST]


def symbols_of(config: ProbeConfig) -> dict[str, list[str]]:
    """Every scheme's labels, what an answer in another scheme is told by (``other_scheme``)."""
    return label_symbols_by_scheme(config.label_schemes)
