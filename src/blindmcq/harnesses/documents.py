"""Presentations as harness documents, and harness answers as prediction records.

A document is one call of the probe: everything ``Presentation`` holds (item id, condition, order, key
slot, labels, option texts, the rendered prompt) plus what the request adds (the context a scoring model
reads, its label choices, the output-token limit). Both harnesses carry it through unchanged (lm-eval in
``doc``, inspect_ai in ``Sample.metadata``), so an answer is scored on import by the same code as a
probe's (``tasks.probe.make_record`` over ``tasks.presentations.interpret``) and never depends on how the
harness itself scored it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindmcq.answers.records import PredictionRecord
from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
from blindmcq.config.schema import Condition, Labels, Prompt, Reasoning, validate_group
from blindmcq.config.schema import Protocol as ProtocolGroup
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError, InputError
from blindmcq.protocols.components import protocol_spec
from blindmcq.tasks.presentations import Presentation, interpret
from blindmcq.tasks.probe import PresentationSetup, build_jobs, make_record

HARNESSES = ("lm-eval", "inspect")
DOC_VERSION = 1  # the document layout below; an import refuses another
PRESENTATION_FIELDS = tuple(f.name for f in dataclasses.fields(Presentation))
_TUPLES = ("order", "label_strings", "option_texts")


@dataclass(frozen=True)
class ProbeConfig:
    """The composed groups a probe presents items with (what ``params.yaml`` holds under these keys, or a
    command's options as their dataclasses: ``PresentationSetup`` checks either once)."""

    prompt: Prompt | Mapping[str, Any]
    labels: Labels | Mapping[str, Any]
    reasoning: Reasoning | Mapping[str, Any]
    condition: Condition | Mapping[str, Any]
    protocol: ProtocolGroup | Mapping[str, Any]
    label_schemes: Mapping[str, Mapping[str, Any]]

    def names(self) -> dict[str, str]:
        groups = ("prompt", "labels", "reasoning", "condition", "protocol")
        return {g: _name(getattr(self, g)) for g in groups}

    @property
    def setup(self) -> PresentationSetup:
        """The probe's own presentation setup from these groups."""
        return PresentationSetup(
            prompt=self.prompt, labels=self.labels, reasoning=self.reasoning, condition=self.condition,
            protocol=self.protocol, schemes=self.label_schemes,
        )  # fmt: skip


def _name(group: Any) -> str:
    """A group's name, given as a mapping (a params file's) or as its dataclass (a command's option)."""
    return str(group.get("name", "?")) if isinstance(group, Mapping) else str(group.name)


def harness_model_cfg(harness: str) -> tuple[dict[str, Any], Abilities]:
    """The stand-in model config a harness's calls are built for: lm-eval scores the label choices by
    log-likelihood after the answer cue (as blindmcq's local base model is scored); inspect_ai generates."""
    if harness == "lm-eval":
        return {"name": "lm-eval", "score_labels": True}, Abilities(score_labels=True)
    if harness == "inspect":
        return {"name": "inspect"}, Abilities()
    raise ConfigError("harness", f"{harness!r} is not one of {HARNESSES}")


def build_documents(items: Sequence[Item], config: ProbeConfig, harness: str) -> list[dict[str, Any]]:
    """One document per call of the probe of ``items`` under ``config``, in the probe's own order (item,
    condition, order, forced slots): the presentations and requests ``tasks.probe.build_jobs`` makes."""
    spec = protocol_spec(config.protocol)
    if spec.uses_matcher:  # the md matcher reads free sentences with an embedding model; not exported
        raise ConfigError(
            "protocol", f"{spec.name!r} (Matched-and-Dashed) cannot be exported; use an sl protocol"
        )
    if harness == "lm-eval" and validate_group("reasoning", config.reasoning).name != "direct":
        raise ConfigError(
            "reasoning", "lm-eval scores the labels by log-likelihood: only 'direct' reasoning applies"
        )
    model_cfg, abilities = harness_model_cfg(harness)
    _, jobs = build_jobs(items, model_cfg, config.setup, abilities=abilities)
    docs = []
    for index, (p, request) in enumerate(jobs):
        doc: dict[str, Any] = {"doc_key": doc_key(p), "index": index, "doc_version": DOC_VERSION}
        for name in PRESENTATION_FIELDS:
            value = getattr(p, name)
            doc[name] = list(value) if name in _TUPLES else value
        doc |= {
            "setting": getattr(p, "setting", "") or "",
            "context": request.user,  # the prompt as sent: with the answer cue where labels are scored
            "choices": list(request.choices),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "target_label": p.label_strings[p.key_slot] if p.key_slot is not None else None,
        }
        docs.append(doc)
    return docs


def doc_key(p: Presentation) -> str:
    """A call's id, unique within a probe: item, condition and order (``forced2`` names its slot)."""
    return f"{p.item_id}|{p.condition}|{p.order_id}"


def presentation_of(doc: Mapping[str, Any], *, file: str, line: int | None = None) -> Presentation:
    """The presentation a document carries; a document that is not one of ours is an InputError."""
    if not isinstance(doc, Mapping):
        raise InputError("no blindmcq document (export it with `blindmcq export`)", file=file, line=line)
    missing = [f for f in ("doc_version", *PRESENTATION_FIELDS) if f not in doc]
    if missing:
        raise InputError(
            f"not a blindmcq document: no {', '.join(missing[:3])} (export it with `blindmcq export`)",
            file=file, line=line,
        )  # fmt: skip
    if doc["doc_version"] != DOC_VERSION:
        raise InputError(
            f"document version {doc['doc_version']!r}; this blindmcq reads {DOC_VERSION}",
            file=file,
            line=line,
        )
    try:
        fields = {name: doc[name] for name in PRESENTATION_FIELDS}
        for name in _TUPLES:
            fields[name] = tuple(fields[name])
        fields["order"] = tuple(int(i) for i in fields["order"])
        p = Presentation(**fields)
    except (TypeError, ValueError) as exc:
        raise InputError(f"malformed blindmcq document ({exc})", file=file, line=line) from exc
    n = p.n_options
    if sorted(p.order) != list(range(n)) or len(p.label_strings) != n or len(p.option_texts) != n:
        raise InputError(f"document {doc.get('doc_key')!r} does not hold {n} options", file=file, line=line)
    if p.key_slot is not None and not 0 <= p.key_slot < n:
        raise InputError(
            f"document {doc.get('doc_key')!r}: key slot {p.key_slot} of {n}", file=file, line=line
        )
    return p


def request_of(doc: Mapping[str, Any], model: str) -> ModelRequest:
    """The request the document stands for, named by ``model``: its hash is the record's request_hash."""
    return ModelRequest(
        model=model,
        system=doc.get("system"),
        user=str(doc.get("context") or doc["user"]),
        choices=tuple(doc.get("choices") or ()),
        temperature=doc.get("temperature"),
        max_tokens=int(doc.get("max_tokens") or 16),
        reasoning=str(doc["reasoning"]),
    )


def record_of(
    doc: Mapping[str, Any],
    response: ModelResponse,
    *,
    model: str,
    backend: str,
    symbols: Mapping[str, Sequence[str]],
    time: str | None,
    file: str,
    line: int | None = None,
) -> PredictionRecord:
    """One prediction row for a harness's answer to ``doc``, parsed and scored as a probe's is."""
    p = presentation_of(doc, file=file, line=line)
    request = request_of(doc, model)
    setting = str(doc.get("setting") or "")
    try:
        return make_record(
            _WithSetting(p, setting) if setting else p, request, response,
            interpret=lambda pres, resp: interpret(pres, resp, symbols=symbols),
            backend=backend, key=request.cache_key(backend), time=time, cached=False,  # type: ignore[arg-type]
        )  # fmt: skip
    except ValueError as exc:
        raise InputError(str(exc), file=file, line=line) from exc


@dataclass(frozen=True)
class _WithSetting:
    """A presentation with its sweep setting (few-shot skew), as ``make_record`` reads it."""

    presentation: Presentation
    setting: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.presentation, name)


def sorted_records(pairs: Sequence[tuple[Any, PredictionRecord]]) -> list[PredictionRecord]:
    """Records in the export's order (a harness may log them in another)."""
    return [record for _, record in sorted(pairs, key=lambda pair: pair[0])]
