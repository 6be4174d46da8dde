"""The multiple-choice probe task: items -> presentations -> model requests -> engine -> one
PredictionRecord per call, for one model (``run_probe``) or a panel of them (``probe_panel``).

- dataset: ``sample_items`` (the seeded sample of the usable items);
- presenter: ``build_jobs`` (``blindmcq.tasks.presentations`` renders each order and label scheme;
  ``make_jobs`` turns presentations into requests with what the backend's declared abilities need);
- parser: ``blindmcq.tasks.parsing.interpret`` (or the MD matcher);
- scorer: ``make_record`` (the picked slot against the presentation's key).

The engine (``blindmcq.engine``) sends the requests and returns full responses. Plain typed Python; the
``probe`` stage, the sweep, the interventions and NonsenseQA all call ``run_probe(items, model_cfg, setup,
engine)``: how the items are presented (``PresentationSetup``, the typed groups) and how the calls are made
(``EngineSettings``, from the typed ``probe`` group) each travel as one frozen value.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
import pandas as pd

from blindmcq.answers.predictions import to_frame, to_table
from blindmcq.answers.records import PredictionRecord
from blindmcq.backends.base import Abilities, Backend, ModelRequest, ModelResponse
from blindmcq.backends.registry import abilities_for, make_backend
from blindmcq.config.schema import (
    Condition,
    Config,
    Labels,
    LocalModel,
    ModelSchema,
    Probe,
    Prompt,
    Reasoning,
)
from blindmcq.config.schema import Protocol as ProtocolGroup  # typing.Protocol is used below
from blindmcq.datasets.items import Item
from blindmcq.engine.cache import ResponseCache
from blindmcq.engine.run import LEASE_TTL_S, POLL_S, Result, run_requests
from blindmcq.errors import ConfigError
from blindmcq.labels import label_symbols_by_scheme
from blindmcq.protocols.components import ProtocolSpec, protocol_spec
from blindmcq.tasks.parsing import interpret
from blindmcq.tasks.presentations import Presentation, build_presentations, for_bank, to_request
from blindmcq.vocabulary import PUBLISHED_ORDER, ParseStatus

log = logging.getLogger(__name__)
GROUPS = ("prompt", "labels", "reasoning", "condition", "protocol")


@dataclasses.dataclass(frozen=True)
class PresentationSetup:
    """How a probe presents its items: the typed ``prompt`` (phrasing), ``labels``, ``reasoning``,
    ``condition`` and ``protocol`` groups (``config/schema.py``), and every label scheme by name
    (``schemes``: what a protocol's ``labels`` names and what an answer in another scheme is told by).
    One value instead of six loose arguments at every call of ``run_probe``/``build_jobs``; each group is
    checked where configuration enters (``config.files.load_group``, ``schema.validate``)."""

    prompt: Prompt
    labels: Labels
    reasoning: Reasoning
    condition: Condition
    protocol: ProtocolGroup
    schemes: Mapping[str, Labels] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_params(
        cls,
        config: Config,
        schemes: Mapping[str, Labels] | None = None,
        *,
        condition: Condition | None = None,
    ) -> PresentationSetup:
        """The five groups of the composed config and the label schemes the entry point read
        (``config.files.load_label_schemes``); ``condition`` overrides the composed one. The phrasing
        names the bank with the words of the dataset's ``description`` (``for_bank``)."""
        groups: dict[str, Any] = {g: config.group(g) for g in GROUPS if g != "condition" or condition is None}
        if condition is not None:
            groups["condition"] = condition
        # the dataset's words; none, or no dataset: neutral words
        description = config.dataset.description if config.dataset is not None else None
        groups["prompt"] = for_bank(groups["prompt"], description)  # the bank named as its config says
        return cls(**groups, schemes=dict(schemes or {}))


@dataclasses.dataclass(frozen=True)
class EngineSettings:
    """How the probe's calls are made: the response cache, the concurrency (null: the model's, else the
    backend's) and the progress bar. From the typed ``probe`` group: :meth:`from_probe`."""

    cache_path: str | Path
    concurrency: int | None = None
    progress: bool = True

    @classmethod
    def from_probe(cls, probe: Probe, *, progress: bool = True) -> EngineSettings:
        """The typed probe group's cache and concurrency."""
        return cls(probe.cache, probe.concurrency, progress)


class PresentationLike(Protocol):
    """The fields of a presentation that go into its PredictionRecord."""

    item_id: str
    condition: str
    phrasing: str
    labels: str
    protocol: str
    reasoning: str
    order: Sequence[int]
    order_id: str
    forced_slot: int | None
    key_slot: int | None
    n_options: int


class ParsedLike(Protocol):
    slot: int | None
    status: ParseStatus


Interpret = Callable[[Any, ModelResponse], ParsedLike]


class Job(NamedTuple):
    presentation: PresentationLike
    request: ModelRequest


def make_record(
    presentation: PresentationLike,
    request: ModelRequest,
    response: ModelResponse,
    *,
    interpret: Interpret,
    backend: str,
    key: str,
    time: str,
    cached: bool,
    setting: str = "",
) -> PredictionRecord:
    """One PredictionRecord; an unparseable or failed answer has no picked slot and counts as wrong."""
    error = response.error
    if response.status == "error":
        slot, status = None, "error"
    else:
        try:
            parsed = interpret(presentation, response)
            slot, status = parsed.slot, parsed.status
        except Exception as exc:  # a parser bug must not drop the call: record it and say why
            log.warning("interpret failed on %s: %s", presentation.item_id, exc)
            slot, status, error = None, "error", f"interpret: {type(exc).__name__}: {exc}"
    order = [int(i) for i in presentation.order]
    picked_option = order[slot] if slot is not None and 0 <= slot < len(order) else None
    return PredictionRecord(
        item_id=presentation.item_id,
        model=request.model,
        condition=presentation.condition,
        phrasing=presentation.phrasing,
        labels=presentation.labels,
        protocol=presentation.protocol,
        reasoning=presentation.reasoning,
        order=order,
        order_id=presentation.order_id,
        forced_slot=presentation.forced_slot,
        key_slot=presentation.key_slot,
        n_options=presentation.n_options,
        picked_slot=slot,
        picked_option=picked_option,
        correct=status == "ok" and slot is not None and slot == presentation.key_slot,
        parse_status=status,
        raw_response=response.text,
        input_tokens=response.input_tokens,
        output_tokens=response.output_tokens,
        latency_s=response.latency_s,
        region=response.region,
        request_hash=key,
        time=time,
        backend=backend,
        cached=cached,
        error=error,
        setting=getattr(presentation, "setting", "") or setting,
        stop_reason=_stop_reason(response),
    )


def _stop_reason(response: ModelResponse) -> str | None:
    stop = response.meta.get("stop_reason") if isinstance(response.meta, Mapping) else None
    return None if stop is None else str(stop)


def records_from(
    jobs: Sequence[Job], results: Sequence[Result], *, interpret: Interpret, setting: str = ""
) -> list[PredictionRecord]:
    """One PredictionRecord per (job, engine result)."""
    return [
        make_record(
            job.presentation,
            job.request,
            result.response,
            interpret=interpret,
            backend=result.backend,
            key=result.key,
            time=result.time,
            cached=result.cached,
            setting=setting,
        )
        for job, result in zip(jobs, results, strict=True)
    ]


def run_calls(
    jobs: Sequence[Job | tuple[PresentationLike, ModelRequest]],
    backend: Backend,
    *,
    cache: ResponseCache,
    interpret: Interpret,
    concurrency: int | Mapping[str, int] | None = None,
    progress: bool = True,
    desc: str = "",
    batch_size: int,
    setting: str = "",
    lease_ttl_s: float = LEASE_TTL_S,
    poll_s: tuple[float, float] = POLL_S,
) -> list[PredictionRecord]:
    """Run every job through the engine (``engine.run.run_requests``: cache, in-flight sharing,
    concurrency, progress) and return one PredictionRecord per job, in job order.

    ``setting`` tags every record (a sweep setting such as the few-shot skew) unless the presentation
    carries its own."""
    jobs = [Job(*job) for job in jobs]
    results = run_requests(
        [job.request for job in jobs], backend, cache=cache, concurrency=concurrency, progress=progress,
        desc=desc, batch_size=batch_size, lease_ttl_s=lease_ttl_s, poll_s=poll_s,
    )  # fmt: skip
    return records_from(jobs, results, interpret=interpret, setting=setting)


def probe_sample(items: Sequence[Item], probe: Probe) -> list[Item]:
    """The items the probe asks: the seeded ``probe.sample`` of ``items`` (the typed ``probe`` group)."""
    return sample_items(items, probe.sample, probe.seed)


def sample_items(
    items: Sequence[Item], size: int | None, seed: int, *, key: str = "probe.sample"
) -> list[Item]:
    """A seeded sample of the usable items, kept in bank order; ``None`` keeps them all.

    A size larger than the usable items is an error naming ``key``, never a silent "the whole bank"."""
    usable = [item for item in items if item.usable]
    if size is None or size == len(usable):
        return usable
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ConfigError(key, f"must be a positive integer or null (every usable item), got {size!r}")
    if size > len(usable):
        raise ConfigError(
            key, f"{size} exceeds the {len(usable)} usable items; use null to probe every usable item"
        )
    chosen = np.random.default_rng(seed).choice(len(usable), size=size, replace=False)
    return [usable[i] for i in sorted(chosen)]


def scores_labels(cfg: ModelSchema, protocol: str, abilities: Abilities | None = None) -> bool:
    """Base models (backends declaring ``scores_by_default``) are scored by label log-probabilities
    unless ``score_labels`` says otherwise (null: the backend's default); MD always generates."""
    default = (abilities or abilities_for(cfg)).scores_by_default
    return bool(default if cfg.score_labels is None else cfg.score_labels) and protocol == "sl"


def effective_max_tokens(cfg: ModelSchema, cap: int | None) -> int:
    """The output-token limit each request carries (docs/config.md, "max_tokens"), ``cap`` being the
    reasoning mode's (or a task's own) limit:

    - the reasoning mode's ``max_tokens`` is the cap (``direct``: 64, enough for a label);
    - a model that reasons by default (``reasons_by_default: true``: GPT-5.6, DeepSeek R1) spends tokens
      on hidden reasoning before the answer, so it gets ``max(model.max_tokens, reasoning.max_tokens)``;
    - with no reasoning cap, the model's ``max_tokens`` (default 16).
    Provider-side thinking budgets (``reasoning=thinking``) are added on top by the backend.
    """
    model_limit = cfg.max_tokens
    if cap is None:
        return int(model_limit or 16)
    if cfg.reasons_by_default and model_limit is not None:
        return max(int(model_limit), int(cap))
    return int(cap)


def make_jobs(
    presentations: Sequence[Presentation],
    *,
    model_cfg: ModelSchema,
    reasoning: Reasoning,
    abilities: Abilities | None = None,
) -> list[Job]:
    """One request per presentation. Heuristic backends also get the option texts they judge by.
    ``abilities``: the backend's (default: those its config's kind declares)."""
    cfg = model_cfg
    name = cfg.name
    abilities = abilities or abilities_for(cfg)
    score = scores_labels(cfg, presentations[0].protocol, abilities) if presentations else False
    max_tokens = effective_max_tokens(cfg, reasoning.max_tokens)
    # heuristics judge the option texts (the fault fake declares the abilities of what it wraps)
    heuristic = abilities.needs_option_texts
    jobs = []
    for p in presentations:
        request: ModelRequest = to_request(
            p,
            model=name,
            temperature=0.0,
            max_tokens=max_tokens,
            score_labels=score,
            thinking_budget=reasoning.thinking_budget_tokens,
        )
        if heuristic:
            extra = {
                **request.extra,
                "option_texts": list(p.option_texts),
                "label_strings": list(p.label_strings),
            }
            if abilities.needs_option_order:  # lexical search breaks ties in the published order
                extra |= {"option_order": list(p.order), "item_id": p.item_id}
            request = dataclasses.replace(request, extra=extra)
        jobs.append(Job(p, request))
    return jobs


def with_cloze_fields(jobs: Sequence[Job], items: Sequence[Item], backend: Backend) -> list[Job]:
    """Under ``scoring: cloze`` the backend scores option texts, not labels: give each request the
    options in display order, the question (full condition only) and the phrasing's answer cue."""
    abilities = getattr(backend, "abilities", None)
    if not (getattr(abilities, "score_options", False) or callable(getattr(backend, "score_options", None))):
        raise ConfigError("model.scoring", f"backend {backend.name} cannot score option texts (cloze)")
    questions = {item.id: item.question for item in items}
    out = []
    for job in jobs:
        p = job.presentation
        extra = {
            **job.request.extra,
            "option_texts": list(p.option_texts),
            "cloze_question": questions[p.item_id] if p.condition == "full" else None,
            "answer_cue": p.answer_cue,
        }
        out.append(job._replace(request=dataclasses.replace(job.request, extra=extra)))
    return out


def _with_fewshot(
    presentations: list[Presentation],
    spec: ProtocolSpec,
    protocol: ProtocolGroup,
    labels: Labels,
    examples: Sequence[Item] | None,
) -> list[Presentation]:
    from blindmcq.protocols.fewshot import apply_fewshot

    seed = protocol.fewshot_seed  # an integer: the schema checked it
    if examples is None:
        from blindmcq.datasets.nonsense import generate_nonsenseqa

        examples = generate_nonsenseqa(seed, n_test=0).fewshot
    return apply_fewshot(
        presentations, examples=examples, skew=spec.fewshot, n_shots=spec.n_shots, seed=seed,  # type: ignore[arg-type]
        labels_cfg=labels, protocol="md" if spec.uses_matcher else "sl",
    )  # fmt: skip


def build_jobs(
    items: Sequence[Item],
    model_cfg: ModelSchema,
    setup: PresentationSetup,
    *,
    fewshot_examples: Sequence[Item] | None = None,
    abilities: Abilities | None = None,
) -> tuple[ProtocolSpec, list[Job]]:
    """The probe's presentations and requests for ``items``: what ``run_probe`` asks and
    ``blindmcq preview`` prints (one builder for both). A protocol's ``labels`` names one of
    ``setup.schemes``."""
    labels, condition, protocol = setup.labels, setup.condition, setup.protocol
    spec = protocol_spec(protocol)
    if spec.labels is not None:
        if spec.labels not in setup.schemes:
            raise ConfigError(
                "protocol.labels", f"no label scheme {spec.labels!r} (have {sorted(setup.schemes)})"
            )
        labels = setup.schemes[spec.labels]
    orders = {"published": [PUBLISHED_ORDER], "all": "all"}.get(spec.order) if spec.order else None
    presentations = build_presentations(
        items,
        conditions=condition.conditions,
        blind_orders=orders or condition.blind_orders,
        full_orders=orders or condition.full_orders,
        forced=condition.forced,
        prompt=setup.prompt,
        labels=labels,
        reasoning=setup.reasoning,
        protocol="md" if spec.uses_matcher else "sl",
        protocol_cfg=protocol,
    )
    if spec.fewshot != "none":
        presentations = _with_fewshot(presentations, spec, protocol, labels, fewshot_examples)
    return spec, make_jobs(presentations, model_cfg=model_cfg, reasoning=setup.reasoning, abilities=abilities)


def run_probe(
    items: Sequence[Item],
    model_cfg: ModelSchema,
    setup: PresentationSetup,
    engine: EngineSettings,
    *,
    backend: Backend | None = None,
    fewshot_examples: Sequence[Item] | None = None,
) -> pd.DataFrame:
    """Ask ``model_cfg``'s model every presentation of ``items`` (as ``setup`` presents them, through
    the engine as ``engine`` says); returns the predictions frame. ``backend``: a built backend to use
    instead of the one ``model_cfg`` makes.

    ``protocol.fewshot`` other than ``none`` prepends a few-shot block (``blindmcq.protocols.fewshot``)
    drawn from ``fewshot_examples``, by default the NonsenseQA few-shot split of ``protocol.fewshot_seed``
    (0); the skew is recorded in the ``setting`` column."""
    cfg = model_cfg
    spec, jobs = build_jobs(
        items,
        cfg,
        setup,
        fewshot_examples=fewshot_examples,
        abilities=abilities_for(cfg, backend),
    )
    # every scheme extended to the bank's largest N, so an answer "AF" to a 32-option item is read
    symbols = label_symbols_by_scheme(setup.schemes, max((item.n_options for item in items), default=0))
    backend = backend or make_backend(cfg)
    matcher = None
    if spec.uses_matcher:
        from blindmcq.protocols.md import make_md_matcher

        matcher = make_md_matcher(setup.protocol)
    if isinstance(cfg, LocalModel) and cfg.scoring == "cloze":
        jobs = with_cloze_fields(jobs, items, backend)
    limit = int(engine.concurrency or cfg.concurrency or getattr(backend, "concurrency", 1) or 1)
    cache = ResponseCache(engine.cache_path)
    try:
        records = run_calls(
            jobs,
            backend,
            cache=cache,
            concurrency=limit,
            progress=engine.progress,
            interpret=lambda p, r: interpret(p, r, symbols=symbols, md_matcher=matcher),
            desc=f"{cfg.name} ({len(items)} items)",
            batch_size=cfg.batch_size,
            setting="" if spec.fewshot == "none" else f"fewshot={spec.fewshot}",
        )
    finally:
        cache.close()
    return to_frame(to_table(records))


def probe_panel(
    items: Sequence[Item],
    models: Sequence[ModelSchema],
    setup: PresentationSetup,
    engine: EngineSettings,
) -> pd.DataFrame:
    """Every model of ``models`` (the probed model first, then the panel's members: the entry point
    reads their configs, ``wiring.probe.panel_configs``) on the same ``items`` with the same presentations,
    as one predictions frame; the ``model`` column tells the rows apart."""
    frames = [run_probe(items, cfg, setup, engine) for cfg in models]
    if len(frames) == 1:
        return frames[0]
    import pyarrow as pa

    return to_frame(pa.concat_tables([to_table(f) for f in frames]))
