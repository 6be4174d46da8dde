"""inspect_ai: the probe as a task (a dataset of samples, blindmcq's multiple-choice solver and inspect's
``choice()`` scorer), and an ``.eval`` log back as predictions.

Each sample's ``input`` is the prompt as blindmcq renders it, ``choices`` the option texts in display
order, ``target`` the key slot's letter in inspect's own A, B, C (inspect names choices by position),
``metadata`` the whole document. On import the completion is parsed again by blindmcq's parser, so the
rows never depend on how the harness scored them. The writer does not import inspect_ai; the log reader
does (the ``harnesses`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from blindmcq.answers.records import PredictionRecord
from blindmcq.atomic import write_text
from blindmcq.backends.base import ModelResponse, coerce_tokens
from blindmcq.errors import InputError
from blindmcq.harnesses.documents import BankKey, doc_int, record_of, sorted_records

BACKEND = "inspect"
DATA_FILE = "dataset.jsonl"
DEFAULT_TASK = "blindmcq_probe"

TASK_FILE = '''"""The blindmcq probe as an inspect_ai task (written by `blindmcq export inspect`).

inspect eval {path} --model PROVIDER/MODEL --temperature 0
blindmcq import inspect LOG.eval --out predictions.parquet
"""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import choice

from blindmcq.harnesses.inspect_solver import blindmcq_choice

HERE = Path(__file__).resolve().parent


@task
def {task}() -> Task:
    symbols = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))["symbols"]
    return Task(
        dataset=json_dataset(str(HERE / "{data}")),
        solver=blindmcq_choice(symbols),
        scorer=choice(),
    )
'''


def sample_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """One inspect sample (the fields ``json_dataset`` reads without a field spec)."""
    key = doc["key_slot"]
    return {
        "id": doc["doc_key"],
        "input": doc["context"],
        "choices": list(doc["option_texts"]),
        "target": chr(ord("A") + key) if key is not None else "",
        "metadata": dict(doc),
    }


def write_task(
    out: Path, docs: Sequence[Mapping[str, Any]], *, task: str = DEFAULT_TASK, symbols: Mapping[str, Any]
) -> list[Path]:
    """``out/<task>.py`` and ``out/dataset.jsonl``; ``symbols`` go to the manifest the task reads."""
    from blindmcq.harnesses.lm_eval import task_name

    out = Path(out)
    name = task_name(task).replace("-", "_").replace(".", "_")
    if not name.isidentifier():
        name = f"task_{name}"
    data = out / DATA_FILE
    write_text(data, "".join(json.dumps(sample_of(doc), ensure_ascii=False) + "\n" for doc in docs))
    path = out / f"{name}.py"
    write_text(
        path, TASK_FILE.replace("{path}", str(path)).replace("{task}", name).replace("{data}", DATA_FILE)
    )
    return [path, data]


def read_log(
    path: Path,
    *,
    model: str | None,
    symbols: Mapping[str, Sequence[str]],
    bank: Mapping[str, BankKey] | None = None,
) -> list[PredictionRecord]:
    """Prediction rows from an inspect_ai log (``.eval`` or ``.json``) of an exported task; with ``bank``
    (the export's manifest) every document is checked against it. A log whose every sample errored is
    an InputError: it holds no answer."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:  # the extra is not installed
        raise InputError(  # noqa: B904  (the cause is in the message)
            f"reading an inspect log needs inspect_ai (pip install 'blindmcq[harnesses]'): {exc}"
        )
    path = Path(path)
    if not path.is_file():
        raise InputError("log file not found", file=str(path))
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect raises its own and pydantic's errors on a damaged log
        raise InputError(
            f"not a readable inspect_ai log ({type(exc).__name__}: {exc})", file=str(path)
        ) from None
    status = str(getattr(log, "status", "success"))
    if status != "success":  # started (interrupted), cancelled or error: not every document was answered
        raise InputError(
            f"the evaluation did not finish (status {status!r}, {len(log.samples or [])} samples logged); "
            "retry it (inspect eval-retry) and import the finished log",
            file=str(path),
        )
    name = model or str(log.eval.model)  # the model the log names, e.g. "openai/gpt-4o"
    pairs: list[tuple[tuple[int, int], PredictionRecord]] = []
    seen: set[str] = set()
    for number, sample in enumerate(log.samples or [], start=1):
        where = f"sample {str(sample.id)[:80]} (epoch {sample.epoch!r:.20})"
        epoch = sample.epoch
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise InputError(f"{where}: field epoch is not an integer", file=str(path))
        doc = sample.metadata
        if not isinstance(doc, dict) or "doc_key" not in doc:
            raise InputError(f"{where} is not a blindmcq document (export it with `blindmcq export inspect`)",
                             file=str(path))  # fmt: skip
        key = f"{doc['doc_key']}#{epoch}"
        if key in seen:
            raise InputError(f"{where} appears twice", file=str(path))
        seen.add(key)
        response = _response(sample)
        record = record_of(doc, response, model=name, backend=BACKEND, symbols=symbols,
                           time=sample.completed_at or None, file=str(path), bank=bank,
                           where=where)  # fmt: skip
        index = doc_int(doc, "index", number, file=str(path), where=where)
        pairs.append(((index, epoch), record))
    if not pairs:
        raise InputError("the log has no samples (was it written with --no-log-samples?)", file=str(path))
    if all(record.parse_status == "error" for _, record in pairs):
        first = min(pairs, key=lambda pair: pair[0])[1]
        raise InputError(
            f"every one of its {len(pairs)} samples errored (sample {first.item_id} {first.order_id}, field "
            f"error: {first.error or '?'}); nothing was answered: retry it (inspect eval-retry)",
            file=str(path),
        )
    return sorted_records(pairs)


def _response(sample: Any) -> ModelResponse:
    """A sample's answer as the backend response blindmcq records: text, usage, stop reason, error."""
    output = sample.output
    usage = getattr(output, "usage", None)
    stop = output.choices[0].stop_reason if getattr(output, "choices", None) else None
    meta = {"stop_reason": "max_tokens" if stop == "max_tokens" else stop} if stop else {}
    error = getattr(sample, "error", None) or getattr(output, "error", None)
    return ModelResponse(
        text=str(output.completion or ""),
        status="error" if error else "ok",
        input_tokens=coerce_tokens(getattr(usage, "input_tokens", None)),
        output_tokens=coerce_tokens(getattr(usage, "output_tokens", None)),
        error=None if not error else str(getattr(error, "message", error))[:500],
        meta=meta,
    )
