"""lm-evaluation-harness: the probe as a ``multiple_choice`` task, and its ``--log_samples`` back as
predictions.

The task scores each document's label choices (``A``, ``B``, ... in the config's scheme) by
log-likelihood after the prompt and its answer cue, as blindmcq scores a local base model
(``backends/local.py``): lm-eval asks for ``context + " " + label``; the picked slot is the argmax, an
exact tie is ``tie``. Nothing here imports lm_eval: the task is YAML, the samples are JSON lines.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from blindmcq.answers.records import PredictionRecord
from blindmcq.atomic import write_text
from blindmcq.backends.base import ModelResponse
from blindmcq.errors import InputError
from blindmcq.harnesses.documents import (
    BankKey,
    doc_choices,
    doc_int,
    presentation_of,
    record_of,
    sorted_records,
)
from blindmcq.jsonl import jsonl_records

BACKEND = "lm-eval"
DATA_FILE = "documents.jsonl"
DEFAULT_TASK = "blindmcq_probe"
TARGET_DELIMITER = " "  # between the answer cue and the label, as the local model's label_delimiter


def task_name(name: str) -> str:
    """A task name lm-eval accepts on its command line (letters, digits, ``_``, ``-``, ``.``)."""
    clean = re.sub(r"[^0-9A-Za-z_.-]+", "_", name).strip("_")
    if not clean:
        raise InputError(f"task name {name!r} has no letter or digit")
    return clean


def task_config(data_file: Path, task: str, docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The task YAML: documents from a local JSON lines file, the fields named directly (lm-eval reads a
    field name as that field, no template: the text is shown exactly as rendered)."""
    config: dict[str, Any] = {
        "task": task,
        "dataset_path": "json",
        # lm-eval resolves data_files against its working directory, so the path is absolute
        "dataset_kwargs": {"data_files": {"test": str(Path(data_file).resolve())}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "context",
        "doc_to_choice": "choices",
        "doc_to_target": "key_slot",
        "target_delimiter": TARGET_DELIMITER,
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": 1.0},
    }
    systems = {doc.get("system") for doc in docs}
    if len(systems) == 1 and (system := systems.pop()):
        config["description"] = f"{system}\n\n"  # the phrasing's system text, before every context
    return config


def write_task(out: Path, docs: Sequence[Mapping[str, Any]], *, task: str = DEFAULT_TASK) -> list[Path]:
    """``out/<task>.yaml`` and ``out/documents.jsonl``; returns both paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = out / DATA_FILE
    write_text(data, "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs))
    name = task_name(task)
    header = (
        "# The blindmcq probe as an lm-evaluation-harness task (written by `blindmcq export lm-eval`).\n"
        f"# lm_eval --model hf --model_args pretrained=MODEL --include_path {out} --tasks {name} "
        "--log_samples --output_path OUT\n"
    )
    body = yaml.safe_dump(task_config(data, name, docs), allow_unicode=True, sort_keys=False)
    path = out / f"{name}.yaml"
    write_text(path, header + body)
    return [path, data]


def _scores(row: Mapping[str, Any], n: int, *, file: str, line: int) -> list[float]:
    """The log-likelihood of each choice: ``filtered_resps`` is ``[[ll, is_greedy], ...]`` (lm-eval may
    log the numbers as strings); ``resps`` nests each once more."""
    raw = row.get("filtered_resps")
    if raw is None and row.get("resps") is not None:
        raw = [r[0] if isinstance(r, list) and r and isinstance(r[0], list) else r for r in row["resps"]]
    if not isinstance(raw, list) or len(raw) != n:
        raise InputError(
            f"expected {n} log-likelihoods in filtered_resps, got {raw!r:.80}", file=file, line=line
        )
    out = []
    for value in raw:
        first = value[0] if isinstance(value, list | tuple) and value else value
        try:
            out.append(float(first))
        except (TypeError, ValueError):
            raise InputError(f"log-likelihood {first!r} is not a number", file=file, line=line) from None
    return out


def read_samples(
    path: Path,
    *,
    model: str,
    symbols: Mapping[str, Sequence[str]],
    bank: Mapping[str, BankKey] | None = None,
) -> list[PredictionRecord]:
    """Prediction rows from an lm-eval ``--log_samples`` file (``samples_<task>_<time>.jsonl``) of an
    exported task; with ``bank`` (the export's manifest) every document is checked against it."""
    path = Path(path)
    if not path.is_file():
        raise InputError("samples file not found", file=str(path))
    pairs: list[tuple[int, PredictionRecord]] = []
    seen: dict[str, int] = {}
    for number, row in jsonl_records(path, objects=False):
        if not isinstance(row, dict) or "doc" not in row:
            raise InputError("not an lm-eval sample (no 'doc')", file=str(path), line=number)
        doc = row["doc"]
        if not isinstance(doc, dict) or "choices" not in doc:
            raise InputError("not a blindmcq document (export it with `blindmcq export lm-eval`)",
                             file=str(path), line=number)  # fmt: skip
        where = f"sample {row.get('doc_id')!r:.40}"
        key = str(doc.get("doc_key"))
        if key in seen:
            raise InputError(
                f"document {key!r} appears twice (also line {seen[key]})", file=str(path), line=number
            )
        seen[key] = number
        p = presentation_of(doc, file=str(path), line=number, where=where)
        choices = doc_choices(doc, p.n_options, file=str(path), line=number, where=where)
        scores = _scores(row, len(choices), file=str(path), line=number)
        finite = [s for s in scores if not math.isnan(s)]
        best = scores.index(max(finite)) if finite else 0
        response = ModelResponse(text=choices[best], choice_logprobs=scores)
        record = record_of(
            doc,
            response,
            model=model,
            backend=BACKEND,
            symbols=symbols,
            time=None,
            file=str(path),
            line=number,
            bank=bank,
            where=where,
        )
        pairs.append((doc_int(doc, "index", number, file=str(path), line=number, where=where), record))
    if not pairs:
        raise InputError("no samples in the file", file=str(path))
    return sorted_records(pairs)


def model_name_of(path: Path) -> str | None:
    """The model lm-eval names in the results file beside the samples (``results_<time>.json``)."""
    for results in sorted(Path(path).parent.glob("results_*.json"), reverse=True):
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        run = data.get("config")  # lm-eval's run settings, not a blindmcq config
        name = data.get("model_name") or (run.get("model") if isinstance(run, dict) else None)
        if name:
            return str(name)
    return None
