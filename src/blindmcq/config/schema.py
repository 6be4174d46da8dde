"""Typed configuration: one dataclass per config group, checked once where configuration enters.

``validate(params, file=...)`` turns the composed config (``params.yaml``, a Hydra ``cfg`` as a dict)
into a :class:`Config`. Unknown keys, wrong types and out-of-range values stop with one
:class:`ConfigError` naming the file and the dotted key, e.g.
``params.yaml: probe.smaple: unknown key; expected one of cache, concurrency, name, sample, seed``.

Model configs have one schema per backend kind, chosen by ``backend:``; dataset configs one per
``loader:``. A field's range lives in its metadata (``ge``/``gt``/``le``/``lt``); ``Literal`` types
list the allowed words. Adding a key means adding a field here (and documenting it in docs/config.md).
"""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

from blindmcq.errors import ConfigError
from blindmcq.labels import DEFAULT_LINE
from blindmcq.vocabulary import (
    ANSWER_PROTOCOLS,
    CONDITIONS,
    CONSTANT_SLOT,
    FEWSHOTS,
    PUBLISHED_ORDER,
    AnswerProtocol,
    BankFormat,
    ClozeNorm,
    FewShot,
    KeyFormat,
    PromptLanguage,
    Scoring,
    SurfaceStrategy,
    TieBreak,
)
from blindmcq.vocabulary import Condition as ConditionName

# ---------------------------------------------------------------- the checker


def _rng(**bounds: float) -> dict[str, Any]:
    return {"metadata": bounds}


def positive(default: Any = None) -> Any:
    return field(default=default, **_rng(ge=1))


def non_negative(default: Any = 0) -> Any:
    return field(default=default, **_rng(ge=0))


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "null"
    if dataclasses.is_dataclass(tp):
        return "a mapping"
    if origin is list:
        return f"a list of {_type_name(typing.get_args(tp)[0])}" if typing.get_args(tp) else "a list"
    if origin is dict or tp is dict:
        return "a mapping"
    words = {int: "an integer", float: "a number", str: "text", bool: "true or false"}
    return words.get(tp, getattr(tp, "__name__", str(tp)))


class _Reject(Exception):
    def __init__(self, key: str, message: str) -> None:
        self.key, self.message = key, message


def _check(value: Any, tp: Any, key: str) -> Any:
    """``value`` as type ``tp``, or _Reject naming ``key``. Ints pass as floats; bools never as numbers."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        errors = []
        for arg in typing.get_args(tp):
            try:
                return _check(value, arg, key)
            except _Reject as exc:
                if exc.key != key:  # a nested key's own error is the most precise one
                    raise
                errors.append(exc)
        raise _Reject(key, f"expected {_type_name(tp)}, got {_show(value)}")
    if origin is Literal:
        if value in typing.get_args(tp) and type(value) in {type(a) for a in typing.get_args(tp)}:
            return value
        raise _Reject(key, f"expected one of {', '.join(map(repr, typing.get_args(tp)))}, got {_show(value)}")
    if tp is type(None):
        if value is None:
            return None
        raise _Reject(key, f"expected null, got {_show(value)}")
    if dataclasses.is_dataclass(tp):
        return build(tp, value, key)
    if origin is list or tp is list:
        if not isinstance(value, list | tuple):
            raise _Reject(key, f"expected {_type_name(tp)}, got {_show(value)}")
        (inner,) = typing.get_args(tp) or (Any,)
        return [_check(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping):
            raise _Reject(key, f"expected a mapping, got {_show(value)}")
        args = typing.get_args(tp) or (str, Any)
        return {_check(k, args[0], f"{key}.{k}"): _check(v, args[1], f"{key}.{k}") for k, v in value.items()}
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise _Reject(key, f"expected a number, got {_show(value)}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Reject(key, f"expected an integer, got {_show(value)}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise _Reject(key, f"expected true or false, got {_show(value)}")
        return value
    if tp is str:
        if isinstance(value, os.PathLike):  # a caller's Path (a notebook's dataset path) reads as its text
            return os.fspath(value)
        if not isinstance(value, str):
            raise _Reject(key, f"expected text, got {_show(value)}")
        return value
    raise TypeError(f"schema type {tp!r} at {key} is not supported")  # a bug in this module


def _show(value: Any) -> str:
    """``value`` as an error quotes it: short, and a registered secret (a resolved ``${secret:NAME}``)
    masked."""
    from blindmcq.secrets import scrub_text

    text = scrub_text(repr(value), assignments=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _bounds(value: Any, meta: Mapping[str, Any], key: str) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return
    signs = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    tests = {"ge": lambda b: value >= b, "gt": lambda b: value > b, "le": lambda b: value <= b,
             "lt": lambda b: value < b}  # fmt: skip
    for name, sign in signs.items():
        if name in meta and not tests[name](meta[name]):
            raise _Reject(key, f"must be {sign} {meta[name]}, got {value!r}")


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def build(cls: type, data: Any, key: str) -> Any:
    """An instance of dataclass ``cls`` from mapping ``data``; errors name ``key.field``."""
    dispatch = getattr(cls, "__dispatch__", None)
    if isinstance(data, cls) or (dispatch is not None and isinstance(data, tuple(dispatch[1].values()))):
        return data  # already typed (for a union: one of its schemas)
    if not isinstance(data, Mapping):
        raise _Reject(key, f"expected a mapping, got {_show(data)}")
    if dispatch is not None:  # a union of schemas chosen by one key (backend, loader)
        tag, choices = dispatch
        kind = data.get(tag)
        if not isinstance(kind, str) or kind not in choices:
            raise _Reject(_join(key, tag), f"expected one of {', '.join(sorted(choices))}, got {_show(kind)}")
        cls = choices[kind]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = _hints(cls)
    unknown = [k for k in data if k not in fields]
    if unknown:
        name = str(unknown[0])
        hint = getattr(cls, "__unknown_hint__", {}).get(name)
        raise _Reject(_join(key, name), hint or f"unknown key; expected one of {', '.join(sorted(fields))}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        sub = _join(key, name)
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise _Reject(sub, "missing")
            continue
        values[name] = _check(data[name], hints[name], sub)
        _bounds(values[name], f.metadata, sub)
    obj = cls(**values)
    check = getattr(obj, "check", None)
    if check is not None:
        check(key)
    return obj


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


# ---------------------------------------------------------------- groups

Orders = Literal["all", "rotations"] | list[str]
ByLanguage = str | dict[str, str] | None


@dataclass(frozen=True)
class SecondBank:
    """Another bank for Table 10 and Figure 4: its predictions (released format) and, for Figure 4, its
    items; paths relative to the project folder. No ``predictions``: no second bank."""

    name: str | None = None
    predictions: str | None = None
    items: str | None = None


@dataclass(frozen=True)
class Analysis:
    name: str = "default"
    extra_predictions: list[str] = field(default_factory=list)
    sample_sizes: list[int] = field(default_factory=list)
    seed: int = 0
    headline_orders: Orders = "all"
    failed_calls: Literal["drop", "wrong"] = "drop"  # docs/statistics.md
    # a probed model with more backend errors than this share of its calls stops the run
    max_failed_share: float = field(default=0.1, **_rng(ge=0, le=1))
    second_bank: SecondBank = field(default_factory=SecondBank)

    def check(self, key: str) -> None:
        if any(n < 1 for n in self.sample_sizes):
            raise _Reject(f"{key}.sample_sizes", f"sizes must be >= 1, got {self.sample_sizes}")


@dataclass(frozen=True)
class Condition:
    name: str = "default"
    conditions: list[ConditionName] = field(default_factory=lambda: list(CONDITIONS))
    blind_orders: Orders = "all"
    full_orders: Orders = field(default_factory=lambda: [PUBLISHED_ORDER])
    forced: bool = False

    def check(self, key: str) -> None:
        if not self.conditions:
            raise _Reject(f"{key}.conditions", "needs at least one of blind, full")


# Datasets: one schema per loader; the common keys first.
@dataclass(frozen=True)
class _Dataset:
    name: str = ""
    loader: str = ""
    path: str | None = None
    paths: list[str] | str | None = None
    limit: int | None = field(default=None, **_rng(ge=0))
    subject: str | None = None  # what the items test, in English ("law", "geography"); null: not said
    # a sentence for people; or, as a mapping, the words the prompts name the bank with, one entry per
    # placeholder a phrasing declares (conf/prompt: `bank`); null, or an entry left out: its neutral words
    description: str | dict[str, str] | None = None
    dep: str | list[str] | None = None  # what DVC watches
    corrections: str | None = None  # reviewed extraction fixes (docs/corpus.md)
    language: str | None = None  # the bank's language (uk, de, en, ...); null: detected from the script


@dataclass(frozen=True)
class CustomsDataset(_Dataset):
    parts: list[Literal["legislation", "operational"]] | None = None
    acts: list[str] | None = None
    competencies: list[str] | None = None
    levels: list[int] | None = None


@dataclass(frozen=True)
class LexamDataset(_Dataset):
    n_options: int = positive(4)


@dataclass(frozen=True)
class GenericDataset(_Dataset):
    source: str = "generic"
    bank: str | None = None
    format: BankFormat | None = None
    header: bool = True  # false: a CSV/TSV/XLSX whose first row is data (columns "0", "1", ...)
    question: str | None = None  # null: guessed (datasets/generic.guess_mapping), said in one line
    options: str | None = None
    option_columns: list[str] | None = None
    key: str | None = None
    key_format: KeyFormat | None = None
    labels: list[str] | str | None = None
    id: str | None = None
    meta_columns: list[str] | None = None
    duplicates: Literal["drop", "keep"] = (
        "drop"  # a row repeating an earlier item; said in one line either way
    )


@dataclass(frozen=True)
class ItemsDataset(_Dataset):
    pass


@dataclass(frozen=True)
class NonsenseDataset(_Dataset):
    seed: int = 0
    n_test: int = non_negative(1000)
    n_fewshot: int = non_negative(100)
    n_options: int = field(default=4, **_rng(ge=2))
    split: Literal["test", "fewshot"] = "test"


@dataclass(frozen=True)
class PdfDataset(_Dataset):
    source: str = "vkks"
    bank: str | None = None
    workers: int | None = positive(None)
    n_options: int | None = field(default=None, **_rng(ge=2))  # null: the Commission's 4
    pilot_per_bank: int | None = non_negative(None)
    seed: int = 0
    # the reviewed extraction fixes (docs/corpus.md): the committed file when a checkout has it; null: none
    corrections: str | None = "defaults/corrections.yaml"


DATASET_SCHEMAS: dict[str, type] = {
    "customs": CustomsDataset, "lexam": LexamDataset, "generic": GenericDataset, "items": ItemsDataset,
    "nonsense": NonsenseDataset, "pdf": PdfDataset,
}  # fmt: skip


@dataclass(frozen=True)
class Dataset(_Dataset):
    __dispatch__: ClassVar = ("loader", DATASET_SCHEMAS)


@dataclass(frozen=True)
class Gate:
    name: str = "default"
    k: int | None = positive(None)  # a fixed k for every N; null: per N from false_rejection
    false_rejection: float | None = field(default=0.05, **_rng(ge=0, le=1))
    orders: Orders = "all"


@dataclass(frozen=True)
class RewriteIntervention:
    name: str = "rewrite"
    rewriter: Literal["length_match", "model"] = "length_match"
    language: PromptLanguage = "uk"
    model: str | dict[str, Any] | None = None
    max_tokens: int = positive(96)
    tolerance: float = field(default=0.15, **_rng(ge=0, lt=1))
    pad_source: Literal["bank", "statutes"] = "bank"
    statutes: str | None = None
    seed: int = 0
    items: str = "results/corpus/items.jsonl"
    sample: int | None = positive(None)
    conditions: list[ConditionName] = field(default_factory=lambda: ["blind"])
    blind_orders: Orders = "all"
    full_orders: Orders = field(default_factory=lambda: [PUBLISHED_ORDER])
    models: Literal["model", "panel"] = "model"  # probed before and after: the model, or the panel


@dataclass(frozen=True)
class AnswerPoolIntervention:
    name: str = "answerpool"
    group_size: int = field(default=5, **_rng(ge=2))
    group_by: str = "bank"
    delete_share: float = field(default=0.2, **_rng(ge=0, le=1))
    seed: int = 0
    conditions: list[ConditionName] = field(default_factory=lambda: list(CONDITIONS))
    language: PromptLanguage = "uk"
    scoring: Literal["auto", "score", "generate"] = "auto"
    max_tokens: int = positive(128)
    entry_labels: Literal["auto", "numbers", "letters"] = "auto"
    items: str = "results/corpus/items.jsonl"
    sample: int | None = positive(None)
    ordinary_orders: Orders = field(default_factory=lambda: [PUBLISHED_ORDER])

    def check(self, key: str) -> None:
        if not self.conditions:
            raise _Reject(f"{key}.conditions", "needs at least one of blind, full")


@dataclass(frozen=True)
class Interventions:
    rewrite: RewriteIntervention | None = None
    answerpool: AnswerPoolIntervention | None = None


@dataclass(frozen=True)
class Labels:
    name: str
    symbols: list[str]
    line: str = DEFAULT_LINE
    noun: dict[str, str] = field(default_factory=dict)
    uniform: bool = False
    # past the listed symbols: combine (AA, AB, ...), count (27, 28, ...) or none (stop); see
    # labels.extended_symbols
    extend: Literal["none", "combine", "count"] = "none"

    def check(self, key: str) -> None:
        if not self.symbols:
            raise _Reject(f"{key}.symbols", "needs at least one label")
        if not self.uniform and len(set(self.symbols)) != len(self.symbols):
            raise _Reject(f"{key}.symbols", "labels repeat (set uniform: true for one shared mark)")
        if self.extend == "count":
            first = self.symbols[0]
            expected = [str(int(first) + i) for i in range(len(self.symbols))] if first.isdigit() else []
            if [str(s) for s in self.symbols] != expected:
                raise _Reject(f"{key}.extend", "count needs symbols that count up by one (1, 2, 3, ...)")


# Models: one schema per backend kind. Credentials never belong in a config file.
_CREDENTIAL_HINT = "credentials do not belong in a config (they would be logged); use the environment"
_CREDENTIAL_KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token", "api_key", "token",
                    "password", "secret")  # fmt: skip


@dataclass(frozen=True)
class Retry:
    """Our own retries on top of a client's (blindmcq.backends.bedrock.RetryPolicy): ``max_attempts``
    in all, delays ``base_s * 2**k`` jittered, capped at ``max_s``."""

    max_attempts: int = positive(8)
    base_s: float = non_negative(1.0)
    max_s: float = non_negative(60.0)


@dataclass(frozen=True)
class Thinking:
    fields: dict[str, Any] = field(default_factory=dict)
    budget_tokens: int = non_negative(0)
    temperature: bool = False


@dataclass(frozen=True)
class _Model:
    __unknown_hint__: ClassVar = {k: _CREDENTIAL_HINT for k in _CREDENTIAL_KEYS}
    # calls in flight where ``concurrency`` is null: the backend kind's own (a class constant, not a key)
    default_concurrency: ClassVar[int] = 1
    name: str = ""
    backend: str = ""
    description: str | None = None
    concurrency: int | None = positive(None)
    max_tokens: int | None = positive(None)
    reasons_by_default: bool = False  # needs output-token room for hidden reasoning (docs/config.md)
    score_labels: bool | None = None
    batch_size: int = positive(1)
    seed: int = 0

    @property
    def calls_in_flight(self) -> int:
        """``concurrency``, or the backend kind's own where it is null."""
        return self.default_concurrency if self.concurrency is None else self.concurrency


def _read_timeout() -> Any:
    return field(default=300, **_rng(gt=0))  # seconds to wait for a provider's answer


@dataclass(frozen=True)
class _Priced(_Model):
    price_per_1k_input: float | None = non_negative(None)
    price_per_1k_output: float | None = non_negative(None)
    verified: bool | None = None  # every fact checked against the provider's documentation
    unverified: list[str] | None = None  # facts no documentation page confirmed (docs/backends.md)
    max_output_tokens: int | None = positive(None)  # the model's documented output ceiling
    # the OpenAI-style route (backends/openai_api.py): chat completions or the Responses API
    base_url: str | None = None
    responses_model_id: str | None = None
    auth: str | None = None
    api_key_env: str | None = None  # the NAME of the environment variable holding the key
    logprobs: bool = False
    top_logprobs: int = positive(20)
    reasoning_effort: str | None = None
    extra_body: dict[str, Any] | None = None
    # bounds on what one call may cost (docs/backends.md, "Bounds on a response")
    max_response_bytes: int = positive(4 * 2**20)  # the decoded body, gzip or not
    call_deadline_s: float = field(default=600, **_rng(gt=0))  # wall time of a call, retries included
    breaker_window_s: float = field(default=60, **_rng(gt=0))  # all attempts failing this long: stop


@dataclass(frozen=True)
class BedrockModel(_Priced):
    default_concurrency: ClassVar[int] = 4
    model_id: str = ""
    api: Literal["converse", "responses"] = "converse"
    regions: list[str] | None = None
    region: str | None = None
    accepts_temperature: bool = True
    accepts_system: bool = True
    thinking: Thinking | None = None
    additional_fields: dict[str, Any] | None = None
    retry: Retry | None = None
    botocore_retries: dict[str, Any] | None = None
    read_timeout_s: float = _read_timeout()
    connect_timeout_s: float = field(default=10, **_rng(gt=0))
    aws_profile: str | None = None
    batch: dict[str, Any] | None = None  # blindmcq.engine.batch.BatchSettings checks its own keys

    def check(self, key: str) -> None:
        if not self.model_id:
            raise _Reject(_join(key, "model_id"), "missing (the Bedrock model or inference-profile id)")
        if not (self.regions or self.region):
            raise _Reject(_join(key, "regions"), "needs a non-empty list of regions")


@dataclass(frozen=True)
class OpenAIModel(_Priced):
    default_concurrency: ClassVar[int] = 4
    model_id: str = ""
    api: Literal["chat", "responses"] = "chat"
    region: str | None = None
    regions: list[str] | None = None
    accepts_temperature: bool = True
    accepts_system: bool = True
    additional_fields: dict[str, Any] | None = None
    retry: Retry | None = None
    read_timeout_s: float = _read_timeout()

    def check(self, key: str) -> None:
        if not self.model_id:
            raise _Reject(_join(key, "model_id"), "missing (the model name the API expects)")


@dataclass(frozen=True)
class LocalModel(_Model):
    path: str | None = None
    cache_dir: str | None = None
    threads: int | None = positive(None)
    answer_prefix: str = ""
    label_delimiter: str = " "
    chat_template: bool = False
    scoring: Scoring = "letter"  # docs/cloze.md
    cloze_norm: ClozeNorm = "char"
    cloze_batch_size: int = positive(8)
    # cloze: the keys and values of a shared context computed once per batch (moves some scores by a
    # grid step against the default's padded batches, so off by default; its own cache key)
    cloze_shared_context: bool = False


@dataclass(frozen=True)
class HeuristicModel(_Model):
    default_concurrency: ClassVar[int] = 64
    strategy: Literal[SurfaceStrategy, "random"] | None = None
    slot: int = non_negative(CONSTANT_SLOT)

    def check(self, key: str) -> None:
        if self.strategy is None:
            raise _Reject(
                _join(key, "strategy"), "missing (constant, longest, shortest, most_words or random)"
            )


@dataclass(frozen=True)
class LexicalModel(_Model):
    """Lexical search over the statutes as a model (backends/lexical.py)."""

    default_concurrency: ClassVar[int] = 4
    index: str | None = None  # the BM25 index folder; null = results/statutes/index
    tie_break: TieBreak = "random"
    tie_rtol: float = non_negative(1e-9)


def _probability(default: float = 0.0) -> Any:
    return field(default=default, **_rng(ge=0, le=1))


@dataclass(frozen=True)
class Faults:
    """The fault backend's rates (blindmcq.backends.fault.FaultRates)."""

    throttle: float = _probability()
    throttle_burst: int = non_negative(3)
    timeout: float = _probability()
    server_error: float = _probability()
    truncate: float = _probability()
    empty: float = _probability()
    refuse: float = _probability()
    latency_s: float = non_negative(0.0)
    tail_rate: float = _probability()
    tail_s: float = non_negative(0.0)


@dataclass(frozen=True)
class FaultModel(_Model):
    inner: Model | None = None  # another model config; null: the constant-slot-0 heuristic
    faults: Faults | None = None
    retry: Retry | None = None


@dataclass(frozen=True)
class InstantModel(_Model):
    pass


@dataclass(frozen=True)
class SlowModel(_Model):
    default_concurrency: ClassVar[int] = 8
    latency_s: float | None = non_negative(None)

    def check(self, key: str) -> None:
        if self.latency_s is None:
            raise _Reject(_join(key, "latency_s"), "the slow backend needs a latency (seconds)")


MODEL_SCHEMAS: dict[str, type] = {
    "bedrock": BedrockModel, "openai": OpenAIModel, "local": LocalModel, "heuristic": HeuristicModel,
    "lexical": LexicalModel, "fault": FaultModel, "instant": InstantModel, "slow": SlowModel,
}  # fmt: skip


@dataclass(frozen=True)
class Model(_Model):
    __dispatch__: ClassVar = ("backend", MODEL_SCHEMAS)


ModelSchema = _Model  # what every model schema is (for annotations: a typed model config of any backend)
PricedModel = _Priced  # a provider's model (Bedrock, OpenAI-style): prices, documented facts


@dataclass(frozen=True)
class StandInModel(_Model):
    """A model config whose ``backend`` names no registered kind: a test's or notebook's stand-in, run
    with its own backend object. It has the keys every model has and no others."""


def any_model_config(data: Any, registered: typing.Container[str] = MODEL_SCHEMAS) -> Any:
    """``model_config``, except that a mapping whose ``backend`` is none of ``registered`` (default: the
    backend kinds with a schema) or that names none becomes a :class:`StandInModel` (a test's own backend
    object answers for it)."""
    if isinstance(data, Mapping) and data.get(Model.__dispatch__[0]) not in registered:
        return typed(StandInModel, data)
    return model_config(data)


def model_config(data: Any, kind: type | None = None) -> Any:
    """A model config as its typed dataclass (``BedrockModel``, ...), chosen by ``backend:``; a typed one
    comes back unchanged. Where a model config enters as a mapping (``conf/model/<name>.yaml``, a test's or
    notebook's dict) it becomes typed here: the backends, the registry and the tasks take only the typed
    record. ``kind``: the schema of a mapping that names no backend (a backend class built directly).
    Errors name the bare key (``regions``), one line, as the backends always have."""
    if isinstance(data, (*MODEL_SCHEMAS.values(), StandInModel)):
        return data
    if not isinstance(data, Mapping):
        raise ConfigError("model", f"expected a mapping, got {type(data).__name__}")
    tag = Model.__dispatch__[0]
    return typed(Model if kind is None or tag in data else kind, data)


def typed(cls: type, data: Any, key: str = "", *, file: str | None = None) -> Any:
    """An instance of dataclass ``cls`` from mapping ``data`` (an instance comes back unchanged), or one
    ConfigError naming ``file`` and ``key.field``: for a section a module reads on its own (``retry``,
    ``faults``) or a command's own config file, which is no group of ``conf/``."""
    try:
        return build(cls, data, key)
    except _Reject as exc:
        _raise(exc, file)


@dataclass(frozen=True)
class Probe:
    name: str = "default"
    sample: int | None = positive(None)
    seed: int = 0
    concurrency: int | None = positive(None)
    cache: str = ".cache/blindmcq/responses.sqlite"


@dataclass(frozen=True)
class Prompt:
    name: str
    blind: str
    full: str
    answer_instruction: str
    language: str = "uk"
    system: str | None = None
    or_word: str = "or"
    answer_cue: str = ""
    # placeholders naming the bank ({exam_uk}, ...) and their neutral words; the dataset's `description`
    # mapping fills them (tasks.presentations.for_bank)
    bank: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Protocol:
    name: str
    fewshot: FewShot = "none"
    n_shots: int = non_negative(0)
    fewshot_seed: int = 0
    labels: str | None = None
    order: Literal["all", "published"] | None = None
    extraction: Literal["letter", "match"] = "letter"
    answer_instruction: ByLanguage = None
    final_answer_regex: str | None = None
    threshold: float | None = None
    tie_epsilon: float | None = non_negative(None)
    embedder: str | None = None
    embedder_role: Literal["query", "passage"] | None = None
    containment: bool | None = None

    def check(self, key: str) -> None:
        if self.final_answer_regex is not None:
            try:
                re.compile(self.final_answer_regex)
            except re.error as exc:
                raise _Reject(f"{key}.final_answer_regex", f"not a valid regex: {exc}") from None


@dataclass(frozen=True)
class Reasoning:
    name: str
    thinking: bool = False
    # null: no reasoning cap, the model's own max_tokens (tasks.probe.effective_max_tokens; every
    # conf/reasoning file sets one)
    max_tokens: int | None = positive(None)
    thinking_budget_tokens: int | None = non_negative(None)
    prefix: ByLanguage = None
    final_line: ByLanguage = None


@dataclass(frozen=True)
class Statutes:
    name: str = "default"
    path: str | None = None
    language: str = "uk"  # lexical search runs only on a bank in this language (statutes/language.py)
    acts: list[str] | None = None  # index only these acts (stages/statutes.py)


@dataclass(frozen=True)
class Panel:
    """Further models probed on the same items as ``model`` (docs/panel.md): ``conf/model/<name>.yaml``
    names. The member named like ``gate_model`` takes the composed ``gate_model`` config."""

    name: str = "default"
    models: list[str] = field(default_factory=list)

    def check(self, key: str) -> None:
        for i, name in enumerate(self.models):
            if not name or "/" in name or name.endswith((".yaml", ".yml")):
                raise _Reject(f"{key}.models[{i}]", f"expected a model config name, got {name!r}")


@dataclass(frozen=True)
class Tracking:
    name: str = "local"
    enabled: bool = True
    uri: str = "sqlite:///mlruns/mlflow.db"
    artifact_location: str = "mlruns/artifacts"
    experiment: str = "blindmcq"


@dataclass(frozen=True)
class Config:
    """The composed configuration (``conf/config.yaml`` with every group), typed."""

    dataset: Dataset | None = None
    statutes: Statutes | None = None
    model: Model | None = None
    gate_model: Model | None = None
    panel: Panel | None = None
    prompt: Prompt | None = None
    labels: Labels | None = None
    condition: Condition | None = None
    protocol: Protocol | None = None
    reasoning: Reasoning | None = None
    gate: Gate | None = None
    probe: Probe | None = None
    analysis: Analysis | None = None
    tracking: Tracking | None = None
    intervention: Interventions | None = None
    seed: int = 0
    defaults: list[Any] | None = None  # Hydra's defaults list, when a conf/config.yaml is read raw

    def group(self, name: str) -> Any:
        """The group ``name`` (``model``, ``gate_model``, ``probe``, ...), or a ConfigError naming it
        when this config has none."""
        value = getattr(self, name, None) if name in {f.name for f in dataclasses.fields(self)} else None
        if value is None:
            raise ConfigError(name, "missing")
        return value


GROUPS: dict[str, type] = {
    "analysis": Analysis, "condition": Condition, "dataset": Dataset, "gate": Gate, "labels": Labels,
    "model": Model, "panel": Panel, "probe": Probe, "prompt": Prompt, "protocol": Protocol,
    "reasoning": Reasoning, "statutes": Statutes, "tracking": Tracking, "intervention": Interventions,
}  # fmt: skip


def _raise(exc: _Reject, file: str | None) -> typing.NoReturn:
    raise ConfigError(exc.key, exc.message, file=file) from None


def validate(params: Any, *, file: str | None = "params.yaml") -> Config:
    """The composed config as a :class:`Config`, or one ConfigError naming ``file`` and the key. A config
    checked from a mapping keeps that mapping (``as_written``); a :class:`Config` comes back unchanged."""
    try:
        config = build(Config, params, "")
    except _Reject as exc:
        _raise(exc, file)
    if config is not params:
        object.__setattr__(config, _WRITTEN, params)  # no field: not a key params.yaml may set
    return config


_WRITTEN = "_written"


def as_config(params: Any, *, file: str | None = "params.yaml") -> Config:
    """The composed config typed: a :class:`Config` comes back unchanged, a mapping is checked
    (``validate``). Where a core function is handed the composed config, it becomes typed here, once."""
    return params if isinstance(params, Config) else validate(params, file=file)


def as_written(config: Config | Mapping[str, Any], group: str | None = None) -> Any:
    """The composed config (or its group ``group``) exactly as written, keys left out staying out: what
    MLflow logs and a fingerprint hashes, so a default added to the schema changes no corpus's identity.
    ``config``: a :class:`Config` checked from a mapping (``validate``, ``params.load_params``), or the
    mapping itself. Not for reading a setting: that is the typed group's."""
    written = config if isinstance(config, Mapping) else config.__dict__.get(_WRITTEN)
    if written is None:
        raise TypeError("a Config built in code has no written form; validate a mapping instead")
    if group is None:
        return written
    if group not in written:
        raise ConfigError(group, "missing")
    return written[group]


def validate_group(group: str, data: Any, *, file: str | None = None, key: str | None = None) -> Any:
    """One group's config (e.g. a ``conf/model/<name>.yaml``) as its dataclass."""
    if group == "intervention":
        rewrite = isinstance(data, Mapping) and "rewriter" in data
        kind = RewriteIntervention if rewrite else AnswerPoolIntervention
    elif group in GROUPS:
        kind = GROUPS[group]
    else:
        expected = ", ".join(sorted(GROUPS))
        raise ConfigError(group, f"unknown config group; expected one of {expected}", file=file)
    try:
        return build(kind, data, key or group)
    except _Reject as exc:
        _raise(exc, file)


def default(schema: type, name: str) -> Any:
    """The default ``schema`` declares for field ``name``: code that reads a plain config mapping takes
    its fallback from here, so a default lives in the schema only."""
    spec = {f.name: f for f in dataclasses.fields(schema)}[name]
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    raise KeyError(f"{schema.__name__}.{name} has no default")


def choices(schema: type, name: str) -> tuple[str, ...]:
    """The words ``schema``'s field ``name`` takes, from its ``Literal`` (inside ``list[...]`` or
    ``... | None`` too): code that checks or lists them takes them from here, so they live in the schema."""

    def words(hint: Any) -> tuple[str, ...]:
        if typing.get_origin(hint) is Literal:
            return typing.get_args(hint)
        for arg in typing.get_args(hint):
            if found := words(arg):
                return found
        return ()

    found = words(typing.get_type_hints(schema)[name])
    if not found:
        raise KeyError(f"{schema.__name__}.{name} is not typed with a Literal")
    return found


# ---------------------------------------------------------------- the commands' own configs


def _positive_number(default: float) -> Any:
    return field(default=default, **_rng(gt=0))


@dataclass(frozen=True)
class PlanModelQuota:
    """One model's quota in a capacity plan (``quota.per_model.<name>``): what it sets overrides the
    plan's ``quota``."""

    rpm: float | None = field(default=None, **_rng(gt=0))
    tpm: float | None = field(default=None, **_rng(gt=0))
    latency_s: float | None = field(default=None, **_rng(gt=0))


@dataclass(frozen=True)
class PlanQuota:
    """A capacity plan's ``quota``: requests and tokens a minute per region, mean seconds a call."""

    rpm: float = _positive_number(250.0)
    tpm: float = _positive_number(1_000_000.0)
    latency_s: float = _positive_number(2.0)
    per_model: dict[str, PlanModelQuota] | None = None


@dataclass(frozen=True)
class PlanRun:
    """One run of a capacity plan (``blindmcq.tasks.capacity``: ``runs[i]``); list fields take one name
    too. ``orders`` is checked by the planner (per condition: all, published, a count or order ids)."""

    name: str | None = None
    items: Literal["all"] | int = field(default="all", **_rng(ge=1))
    models: str | list[str] = "all"
    conditions: str | list[str] | None = None
    orders: Any = None
    forced: bool = False
    forced_conditions: str | list[str] | None = None
    phrasings: str | list[str] | None = None
    labels: str | list[str] | None = None
    reasoning: str | list[str] | None = None


@dataclass(frozen=True)
class PlanConfig:
    """A capacity plan (``blindmcq plan --config FILE``; ``capacity.paper_config()``): the items (a count
    with ``n_options``, or ``items_file``), the models, the quota and the runs."""

    runs: list[PlanRun]
    models: str | list[str] | None = None
    items: int | None = positive(None)
    n_options: int = field(default=4, **_rng(ge=2))
    items_file: str | None = None
    bank: str | None = None  # whose items, in words (the report's first line)
    quota: PlanQuota | None = None
    chars_per_token: float = _positive_number(3.0)
    output_tokens: dict[str, float] | None = None  # by reasoning mode; the planner has the paper's
    throughput: float | None = None  # calls a second a server sustains (checked by the planner)
    sample_items: int = positive(40)
    sample_file: str | None = None
    seed: int = 0

    def check(self, key: str) -> None:
        if not self.runs:
            raise _Reject(_join(key, "runs"), "expected a non-empty list of runs")
        if self.items_file is None and self.items is None:
            raise _Reject(_join(key, "items"), "expected a positive item count (or items_file), got None")


@dataclass(frozen=True)
class NonsenseSettings:
    """A NonsenseQA run (``blindmcq nonsense``; ``tasks.nonsense.run_nonsense``): the generated bank,
    which (protocol, skew) pairs to run (``runs``, default: ``protocols`` x ``skews``), the orders asked,
    where the test keys go, the prompt and the labels."""

    n_test: int = positive(1000)
    skews: list[FewShot] = field(default_factory=lambda: list(FEWSHOTS))
    protocols: list[AnswerProtocol] = field(default_factory=lambda: list(ANSWER_PROTOCOLS))
    runs: list[list[str]] | None = None
    orders: str | list[str] = "all"
    keys: Literal["skew", "drawn"] = "skew"
    seed: int = 0
    n_shots: int = non_negative(5)
    phrasing: str = "minimal"
    labels: str = "latin"
    md_max_tokens: int = positive(48)


def _masked_repr(cls: type) -> None:
    """``cls``'s generated repr with every registered secret masked: a ``${secret:NAME}`` resolved into a
    prompt or a URL (``secrets.resolve_secret_refs``) never reaches a log line through a typed config."""
    generated = cls.__repr__

    def __repr__(self: Any) -> str:
        from blindmcq.secrets import scrub_text

        return scrub_text(generated(self), assignments=False)

    cls.__repr__ = __repr__  # type: ignore[method-assign]


for _schema in [v for v in list(globals().values()) if isinstance(v, type) and dataclasses.is_dataclass(v)]:
    if _schema.__module__ == __name__:
        _masked_repr(_schema)
