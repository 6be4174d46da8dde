"""``blindmcq import lm-eval SAMPLES.jsonl`` / ``blindmcq import inspect LOG``: a harness's answers to an
exported probe -> blindmcq's predictions format (``schema_version`` 1, docs/predictions.md).

Each answer is parsed and scored as blindmcq's own probe scores it (``documents.record_of``): lm-eval's
label log-likelihoods by their argmax (an exact tie is ``tie``), inspect's completion by blindmcq's
parser. ``--out`` takes ``.parquet`` or ``.jsonl``; list the file under ``analysis.extra_predictions``
for the pipeline's analysis and report, or put it at ``results/predictions/predictions.parquet`` to gate
on it. ``--audit DIR`` also writes the audit report (``report.md``, ``index.html``, ``metrics.json``)
for the bank the export wrote (``--export DIR``, default: the folder beside the task's data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from blindmcq.answers.predictions import to_frame, to_table
from blindmcq.answers.records import PredictionRecord
from blindmcq.datasets.items import Item
from blindmcq.errors import InputError
from blindmcq.harnesses.documents import HARNESSES


def import_predictions(
    harness: str, path: Path, *, model: str | None, symbols: Mapping[str, Sequence[str]]
) -> pd.DataFrame:
    """The predictions frame of a harness's log of an exported probe."""
    records: list[PredictionRecord]
    if harness == "lm-eval":
        from blindmcq.harnesses.lm_eval import model_name_of, read_samples

        name = model or model_name_of(path)
        records = read_samples(path, model=name or "", symbols=symbols)  # its rows checked first
        if not name or _is_path(name):
            said = f"names the model by a local path ({name})" if name else "names no model"
            raise InputError(
                f"lm-eval's results file beside the samples {said}; give --model NAME", file=str(path)
            )
    elif harness == "inspect":
        from blindmcq.harnesses.inspect_task import read_log

        records = read_log(path, model=model, symbols=symbols)
    else:
        raise InputError(f"unknown harness {harness!r} (one of {HARNESSES})")
    return to_frame(to_table(records))


def _is_path(name: str) -> bool:
    """A model named by a checkpoint folder (``pretrained=/tmp/qdpv68r5``), not by a model id."""
    return name.startswith(("/", "./", "../", "~")) or Path(name).exists()


def export_items(export_dir: Path) -> list[Item]:
    """The bank an export wrote (``items.jsonl`` beside its ``manifest.json``)."""
    from blindmcq.datasets.items import read_items

    manifest = Path(export_dir) / "manifest.json"
    if not manifest.is_file():
        raise InputError("no manifest.json: not a folder `blindmcq export` wrote (give --export DIR)",
                         file=str(export_dir))  # fmt: skip
    return read_items(Path(export_dir) / "items.jsonl")
