"""Presentations as harness documents, and harness answers as prediction records.

A document is one call of the probe: everything ``Presentation`` holds (item id, condition, order, key
slot, labels, option texts, the rendered prompt) plus what the request adds (the context a scoring model
reads, its label choices, the output-token limit). Both harnesses carry it through unchanged (lm-eval in
``doc``, inspect_ai in ``Sample.metadata``), so an answer is scored on import by the same code as a
probe's (``tasks.probe.make_record`` over ``tasks.parsing.interpret``) and never depends on how the
harness itself scored it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindmcq.answers.records import PredictionRecord
from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
from blindmcq.config.schema import Condition, Labels, Prompt, Reasoning, StandInModel
from blindmcq.config.schema import Protocol as ProtocolGroup
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError, InputError
from blindmcq.protocols.components import protocol_spec
from blindmcq.tasks.parsing import interpret
from blindmcq.tasks.presentations import Presentation
from blindmcq.tasks.probe import PresentationSetup, build_jobs, make_record

HARNESSES = ("lm-eval", "inspect")
DOC_VERSION = 1  # the document layout below; an import refuses another
PRESENTATION_FIELDS = tuple(f.name for f in dataclasses.fields(Presentation))
_TUPLES = ("order", "label_strings", "option_texts")


@dataclass(frozen=True)
class ProbeConfig:
    """The typed groups a probe presents items with (a command's options, ``config.files.load_group``)
    and every label scheme by name (``config.files.load_label_schemes``)."""

    prompt: Prompt
    labels: Labels
    reasoning: Reasoning
    condition: Condition
    protocol: ProtocolGroup
    label_schemes: Mapping[str, Labels]

    def names(self) -> dict[str, str]:
        groups = ("prompt", "labels", "reasoning", "condition", "protocol")
        return {g: str(getattr(self, g).name) for g in groups}

    @property
    def setup(self) -> PresentationSetup:
        """The probe's own presentation setup from these groups."""
        return PresentationSetup(
            prompt=self.prompt, labels=self.labels, reasoning=self.reasoning, condition=self.condition,
            protocol=self.protocol, schemes=self.label_schemes,
        )  # fmt: skip


def harness_model_cfg(harness: str) -> tuple[StandInModel, Abilities]:
    """The stand-in model config a harness's calls are built for: lm-eval scores the label choices by
    log-likelihood after the answer cue (as blindmcq's local base model is scored); inspect_ai generates."""
    if harness == "lm-eval":
        return StandInModel(name="lm-eval", score_labels=True), Abilities(score_labels=True)
    if harness == "inspect":
        return StandInModel(name="inspect"), Abilities()
    raise ConfigError("harness", f"{harness!r} is not one of {HARNESSES}")


def build_documents(items: Sequence[Item], config: ProbeConfig, harness: str) -> list[dict[str, Any]]:
    """One document per call of the probe of ``items`` under ``config``, in the probe's own order (item,
    condition, order, forced slots): the presentations and requests ``tasks.probe.build_jobs`` makes."""
    setup = config.setup
    spec = protocol_spec(setup.protocol)
    if spec.uses_matcher:  # the md matcher reads free sentences with an embedding model; not exported
        raise ConfigError(
            "protocol", f"{spec.name!r} (Matched-and-Dashed) cannot be exported; use an sl protocol"
        )
    if harness == "lm-eval" and setup.reasoning.name != "direct":
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


def presentation_of(
    doc: Mapping[str, Any], *, file: str, line: int | None = None, where: str = ""
) -> Presentation:
    """The presentation a document carries, each field of the type ``Presentation`` declares; a document
    that is not one of ours, or a field of another type, is an InputError naming the field."""
    what = f"{where}: " if where else ""
    if not isinstance(doc, Mapping):
        raise InputError(
            f"{what}no blindmcq document (export it with `blindmcq export`)", file=file, line=line
        )
    missing = [f for f in ("doc_version", *PRESENTATION_FIELDS) if f not in doc]
    if missing:
        raise InputError(
            f"{what}not a blindmcq document: no {', '.join(missing[:3])} (export it with `blindmcq export`)",
            file=file, line=line,
        )  # fmt: skip
    if doc["doc_version"] != DOC_VERSION:
        raise InputError(
            f"{what}document version {doc['doc_version']!r:.40}; this blindmcq reads {DOC_VERSION}",
            file=file,
            line=line,
        )
    for name in PRESENTATION_FIELDS:
        if not _FIELD_TYPES[name](doc[name]):
            raise InputError(f"{what}field {name} is {doc[name]!r:.60}, not {_FIELD_WORDS[name]}",
                             file=file, line=line)  # fmt: skip
    fields = {name: doc[name] for name in PRESENTATION_FIELDS}
    for name in _TUPLES:
        fields[name] = tuple(fields[name])
    p = Presentation(**fields)
    n = p.n_options
    if sorted(p.order) != list(range(n)) or len(p.label_strings) != n or len(p.option_texts) != n:
        raise InputError(f"{what}fields order, label_strings, option_texts do not hold {n} options",
                         file=file, line=line)  # fmt: skip
    if p.key_slot is not None and not 0 <= p.key_slot < n:
        raise InputError(f"{what}field key_slot is {p.key_slot}, not a slot of {n}", file=file, line=line)
    if p.forced_slot is not None and not 0 <= p.forced_slot < n:
        raise InputError(
            f"{what}field forced_slot is {p.forced_slot}, not a slot of {n}", file=file, line=line
        )
    return p


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ints(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(_is_int(v) for v in value)


def _strs(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


_OPTIONAL = ("system",)
_FIELD_TYPES = {
    name: (
        _ints if name == "order"
        else _strs if name in _TUPLES
        else (lambda v: v is None or _is_int(v)) if name in ("key_slot", "forced_slot")
        else (lambda v: _is_int(v) and v >= 2) if name == "n_options"
        else _is_int if name == "shared_chars"
        else (lambda v: v is None or isinstance(v, str)) if name in _OPTIONAL
        else (lambda v: isinstance(v, str))
    )
    for name in PRESENTATION_FIELDS
}  # fmt: skip
_FIELD_WORDS = {
    name: (
        "a list of integers" if name == "order"
        else "a list of strings" if name in _TUPLES
        else "an integer or null" if name in ("key_slot", "forced_slot")
        else "an integer of at least 2" if name == "n_options"
        else "an integer" if name == "shared_chars"
        else "a string or null" if name in _OPTIONAL
        else "a string"
    )
    for name in PRESENTATION_FIELDS
}  # fmt: skip


@dataclass(frozen=True)
class BankKey:
    """What the export's manifest holds of one probed item: its key (original option index) and the hash
    of its option texts in the published order (``options_hash``)."""

    key: int | None
    options_sha256: str


def options_hash(options: Sequence[str]) -> str:
    """sha256 of an item's option texts in the published order (as a JSON list, UTF-8)."""
    return hashlib.sha256(json.dumps(list(options), ensure_ascii=False).encode("utf-8")).hexdigest()


def check_against_bank(
    p: Presentation, bank: Mapping[str, BankKey], *, file: str, line: int | None = None, where: str = ""
) -> None:
    """A document must present an item of the exported bank, with its option texts and with the key slot
    its key takes in the document's order; anything else is an InputError naming the item and field."""
    what = f"{where}: " if where else ""
    expected = bank.get(p.item_id)
    if expected is None:
        raise InputError(f"{what}item_id {p.item_id!r} is not in the exported bank (manifest.json)",
                         file=file, line=line)  # fmt: skip
    published: list[str] = [""] * p.n_options
    for slot, index in enumerate(p.order):
        published[index] = p.option_texts[slot]
    if options_hash(published) != expected.options_sha256:
        raise InputError(f"{what}item {p.item_id!r}: field option_texts differ from the exported bank's",
                         file=file, line=line)  # fmt: skip
    want = None if expected.key is None else p.order.index(expected.key)
    if p.key_slot != want:
        raise InputError(
            f"{what}item {p.item_id!r}: field key_slot is {p.key_slot}, the exported bank's key is in slot "
            f"{want} of order {p.order_id}",
            file=file, line=line,
        )  # fmt: skip


def doc_int(
    doc: Mapping[str, Any], field: str, default: int, *, file: str, line: int | None = None, where: str = ""
) -> int:
    """A document's integer field (absent or null: ``default``); anything else is an InputError."""
    value = doc.get(field)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        what = f"{where}: " if where else ""
        raise InputError(f"{what}field {field} is {value!r:.40}, not an integer", file=file, line=line)
    return value


def doc_choices(
    doc: Mapping[str, Any], n: int, *, file: str, line: int | None = None, where: str = ""
) -> list[str]:
    """A scored document's label choices: one string per option."""
    choices = doc.get("choices")
    if not isinstance(choices, list) or len(choices) != n or not all(isinstance(c, str) for c in choices):
        what = f"{where}: " if where else ""
        raise InputError(
            f"{what}field choices is {choices!r:.60}, not {n} label strings", file=file, line=line
        )
    return choices


def request_of(
    doc: Mapping[str, Any], model: str, *, file: str = "", line: int | None = None, where: str = ""
) -> ModelRequest:
    """The request the document stands for, named by ``model``: its hash is the record's request_hash."""
    temperature = doc.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
    ):
        what = f"{where}: " if where else ""
        raise InputError(
            f"{what}field temperature is {temperature!r:.40}, not a number", file=file, line=line
        )
    choices = doc.get("choices") or ()
    if not isinstance(choices, list | tuple) or not all(isinstance(c, str) for c in choices):
        what = f"{where}: " if where else ""
        raise InputError(f"{what}field choices is {choices!r:.60}, not label strings", file=file, line=line)
    return ModelRequest(
        model=model,
        system=doc.get("system"),
        user=str(doc.get("context") or doc["user"]),
        choices=tuple(choices),
        temperature=temperature,
        max_tokens=doc_int(doc, "max_tokens", 16, file=file, line=line, where=where) or 16,
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
    bank: Mapping[str, BankKey] | None = None,
    where: str = "",
) -> PredictionRecord:
    """One prediction row for a harness's answer to ``doc``, parsed and scored as a probe's is; with
    ``bank`` (the export's manifest) the document is checked against it first (``check_against_bank``)."""
    p = presentation_of(doc, file=file, line=line, where=where)
    if bank is not None:
        check_against_bank(p, bank, file=file, line=line, where=where)
    request = request_of(doc, model, file=file, line=line, where=where)
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
