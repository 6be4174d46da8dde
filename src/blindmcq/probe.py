"""The probe: items -> presentations -> model requests -> one PredictionRecord per call.

Plain typed Python; the ``probe`` stage and the Hydra sweep entry point both call ``run_probe``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.backends.base import Backend, ModelRequest
from blindmcq.backends.registry import make_backend
from blindmcq.cache import ResponseCache
from blindmcq.errors import ConfigError
from blindmcq.items import Item
from blindmcq.parsing import interpret
from blindmcq.predictions import to_frame, to_table
from blindmcq.presentations import Presentation, build_presentations, load_conf, to_request
from blindmcq.protocols.components import ProtocolSpec, protocol_spec
from blindmcq.runner import Job, run_calls

log = logging.getLogger(__name__)


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


def scores_labels(model_cfg: Mapping[str, Any], protocol: str) -> bool:
    """Base models (the local backend) are scored by label log-probabilities; MD always generates."""
    default = model_cfg.get("backend") == "local"
    return bool(model_cfg.get("score_labels", default)) and protocol == "sl"


def effective_max_tokens(model_cfg: Mapping[str, Any], reasoning: Mapping[str, Any]) -> int:
    """The output-token limit each request carries (docs/config.md, "max_tokens"):

    - the reasoning mode's ``max_tokens`` is the cap (``direct``: 64, enough for a label);
    - a model that reasons by default (``reasons_by_default: true``: GPT-5.6, DeepSeek R1) spends tokens
      on hidden reasoning before the answer, so it gets ``max(model.max_tokens, reasoning.max_tokens)``;
    - with no reasoning cap, the model's ``max_tokens`` (default 16).
    Provider-side thinking budgets (``reasoning=thinking``) are added on top by the backend.
    """
    model_limit = model_cfg.get("max_tokens")
    cap = reasoning.get("max_tokens")
    if cap is None:
        return int(model_limit or 16)
    if model_cfg.get("reasons_by_default") and model_limit is not None:
        return max(int(model_limit), int(cap))
    return int(cap)


def make_jobs(
    presentations: Sequence[Presentation],
    *,
    model_cfg: Mapping[str, Any],
    reasoning: Mapping[str, Any],
) -> list[Job]:
    """One request per presentation. Heuristic backends also get the option texts they judge by."""
    name = str(model_cfg["name"])
    score = scores_labels(model_cfg, presentations[0].protocol) if presentations else False
    max_tokens = effective_max_tokens(model_cfg, reasoning)
    # option-only backends (the fault fake wraps a heuristic; lexical search reads the statutes index)
    heuristic = model_cfg.get("backend") in ("heuristic", "fault", "lexical")
    jobs = []
    for p in presentations:
        request: ModelRequest = to_request(
            p,
            model=name,
            temperature=0.0,
            max_tokens=max_tokens,
            score_labels=score,
            thinking_budget=reasoning.get("thinking_budget_tokens"),
        )
        if heuristic:
            extra = {
                **request.extra,
                "option_texts": list(p.option_texts),
                "label_strings": list(p.label_strings),
            }
            if model_cfg.get("backend") == "lexical":  # its tie-break follows the published order
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
    protocol_cfg: Mapping[str, Any],
    labels: Mapping[str, Any],
    examples: Sequence[Item] | None,
) -> list[Presentation]:
    from blindmcq.protocols.fewshot import apply_fewshot

    seed = protocol_cfg.get("fewshot_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError("protocol.fewshot_seed", f"expected an integer, got {seed!r}")
    if examples is None:
        from blindmcq.datasets.nonsense import generate_nonsenseqa

        examples = generate_nonsenseqa(seed, n_test=0).fewshot
    return apply_fewshot(
        presentations, examples=examples, skew=spec.fewshot, n_shots=spec.n_shots, seed=seed,  # type: ignore[arg-type]
        labels_cfg=labels, protocol="md" if spec.uses_matcher else "sl",
    )  # fmt: skip


def build_jobs(
    items: Sequence[Item],
    *,
    model_cfg: Mapping[str, Any],
    prompt: Mapping[str, Any],
    labels: Mapping[str, Any],
    reasoning: Mapping[str, Any],
    condition: Mapping[str, Any],
    protocol_cfg: Mapping[str, Any],
    fewshot_examples: Sequence[Item] | None = None,
) -> tuple[ProtocolSpec, list[Job]]:
    """The probe's presentations and requests for ``items``: what ``run_probe`` asks and
    ``blindmcq preview`` prints (one builder for both)."""
    spec = protocol_spec(protocol_cfg)
    if spec.labels is not None:
        labels = load_conf("labels", spec.labels)
    orders = {"published": ["rot0"], "all": "all"}.get(spec.order) if spec.order else None
    presentations = build_presentations(
        items,
        conditions=condition["conditions"],
        blind_orders=orders or condition.get("blind_orders", "all"),
        full_orders=orders or condition.get("full_orders", ["rot0"]),
        forced=bool(condition.get("forced", False)),
        prompt=prompt,
        labels=labels,
        reasoning=reasoning,
        protocol="md" if spec.uses_matcher else "sl",
        protocol_cfg=protocol_cfg,
    )
    if spec.fewshot != "none":
        presentations = _with_fewshot(presentations, spec, protocol_cfg, labels, fewshot_examples)
    return spec, make_jobs(presentations, model_cfg=model_cfg, reasoning=reasoning)


def run_probe(
    items: Sequence[Item],
    *,
    model_cfg: Mapping[str, Any],
    prompt: Mapping[str, Any],
    labels: Mapping[str, Any],
    reasoning: Mapping[str, Any],
    condition: Mapping[str, Any],
    protocol_cfg: Mapping[str, Any],
    cache_path: str | Path,
    concurrency: int | None = None,
    backend: Backend | None = None,
    progress: bool = True,
    fewshot_examples: Sequence[Item] | None = None,
) -> pd.DataFrame:
    """Ask ``model_cfg``'s model every presentation of ``items``; returns the predictions frame.

    ``protocol.fewshot`` other than ``none`` prepends a few-shot block (``blindmcq.protocols.fewshot``)
    drawn from ``fewshot_examples``, by default the NonsenseQA few-shot split of ``protocol.fewshot_seed``
    (0); the skew is recorded in the ``setting`` column."""
    spec, jobs = build_jobs(
        items, model_cfg=model_cfg, prompt=prompt, labels=labels, reasoning=reasoning,
        condition=condition, protocol_cfg=protocol_cfg, fewshot_examples=fewshot_examples,
    )  # fmt: skip
    backend = backend or make_backend(model_cfg)
    matcher = None
    if spec.uses_matcher:
        from blindmcq.protocols.md import make_md_matcher

        matcher = make_md_matcher(protocol_cfg)
    if model_cfg.get("scoring") == "cloze":
        jobs = with_cloze_fields(jobs, items, backend)
    limit = int(concurrency or model_cfg.get("concurrency") or getattr(backend, "concurrency", 1) or 1)
    cache = ResponseCache(cache_path)
    try:
        records = run_calls(
            jobs,
            backend,
            cache=cache,
            concurrency=limit,
            progress=progress,
            interpret=lambda p, r: interpret(p, r, md_matcher=matcher),
            desc=f"{model_cfg['name']} ({len(items)} items)",
            batch_size=int(model_cfg.get("batch_size", 1)),
            setting="" if spec.fewshot == "none" else f"fewshot={spec.fewshot}",
        )
    finally:
        cache.close()
    return to_frame(to_table(records))
