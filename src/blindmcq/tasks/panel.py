"""The default panel: the probed model and every ``panel.models`` member on the same items.

One model of the panel builds the gate (``gate_model``); the others are scored on its accepted items,
so the report can show whether a gate built on one model stays open to the next.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from blindmcq.answers.predictions import to_frame, to_table
from blindmcq.backends.registry import abilities_of
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError
from blindmcq.params import require, section
from blindmcq.tasks.from_params import probe_items

log = logging.getLogger(__name__)


def panel_members(params: dict[str, Any]) -> list[str]:
    """The ``panel.models`` names whose model config the entry point loads (``config.files.load_models``):
    all but the probed model and the member named like ``gate_model`` (both composed in ``params``)."""
    composed = {require(params, "model.name"), (params.get("gate_model") or {}).get("name")}
    names = list((params.get("panel") or {}).get("models") or [])
    return [n for i, n in enumerate(names) if n not in composed and n not in names[:i]]


def panel_configs(
    params: dict[str, Any], models: Mapping[str, Mapping[str, Any]], *, absent: str | None = None
) -> list[dict[str, Any]]:
    """The model configs of ``panel.models`` (none without a panel), in the order listed.

    ``models`` holds the configs of :func:`panel_members`, read by the entry point. A name listed twice
    is a config error naming ``panel.models``; the probed model, when listed (e.g. ``-S model=longest``
    with the default panel), is probed once, as ``model``; the member named like ``gate_model`` is the
    composed ``gate_model`` config. ``absent`` (``statutes.language.lexical_absent``): why lexical search
    cannot measure this bank; its members (backend ``lexical``) are then left out."""
    names = list((params.get("panel") or {}).get("models") or [])
    probed = require(params, "model.name")
    gate_model = params.get("gate_model") or {}
    seen: set[str] = set()
    configs = []
    for name in names:
        if name == probed:
            log.info("panel member %s is the probed model: probed once, with the model config", name)
            continue
        if name in seen:
            raise ConfigError("panel.models", f"lists {name!r} twice")
        seen.add(name)
        if gate_model.get("name") == name:
            cfg = dict(gate_model)
        elif name in models:
            cfg = dict(models[name])
        else:
            raise ConfigError("panel.models", f"no model config was read for {name!r}")
        if absent and abilities_of(cfg).reads_statutes:
            log.warning("panel member %s left out: %s", name, absent)
            continue
        configs.append(cfg)
    return configs


NORMS = {"char": "per character", "token": "per token", "raw": "raw"}


def describe_model(cfg: dict[str, Any]) -> str:
    """A few words for the report: the config's ``description``, else its scoring or strategy."""
    if cfg.get("description"):
        return str(cfg["description"])
    if cfg.get("scoring") == "cloze":
        return f"cloze, {NORMS.get(str(cfg.get('cloze_norm', 'char')), cfg.get('cloze_norm'))}"
    if cfg.get("scoring") == "letter" or ("scoring" in cfg and not cfg.get("scoring")):
        return "letter scoring"
    if cfg.get("strategy"):
        return f"option-only: {cfg['strategy']}"
    return ""


def panel_manifest(
    params: dict[str, Any], models: Mapping[str, Mapping[str, Any]], *, absent: str | None = None
) -> dict[str, Any]:
    """What ``results/predictions/models.json`` holds: each probed model's role, a description for the
    report, which panel members are the probed model's weights under another scoring, and which read the
    option texts alone (``option_only``: their blind and full answers are the same by construction, so
    a blind-full correlation across models leaves them out), and (``absent``) the lexical members left
    out and why."""
    model = section(params, "model")
    out: dict[str, Any] = {"model": model["name"], "models": {model["name"]: describe_model(model)}}
    variants = []
    option_only = [model["name"]] if abilities_of(model).needs_option_texts else []
    configs = panel_configs(params, models, absent=absent)
    for cfg in configs:
        out["models"][cfg["name"]] = describe_model(cfg)
        same_weights = _weights(cfg) == _weights(model)
        if same_weights and "scoring" in cfg and "scoring" in model:
            variants.append(cfg["name"])
        if abilities_of(cfg).needs_option_texts:
            option_only.append(cfg["name"])
    out["scoring_variants"] = variants
    out["option_only"] = option_only
    kept = {cfg["name"] for cfg in configs}
    left_out = [
        n for n in (params.get("panel") or {}).get("models") or [] if n not in kept and n != model["name"]
    ]
    if absent and left_out:  # only then: a run with every member keeps its manifest as it was
        out["absent"] = dict.fromkeys(left_out, absent)
    return out


def _weights(cfg: dict[str, Any]) -> tuple[Any, Any]:
    return cfg.get("backend"), cfg.get("path")


def probe_panel(
    params: dict[str, Any],
    items: Sequence[Item],
    *,
    models: Mapping[str, Mapping[str, Any]],
    label_schemes: Mapping[str, Mapping[str, Any]],
    absent: str | None = None,
) -> pd.DataFrame:
    """The probed model and every panel member on ``items`` (the entry point's seeded sample,
    ``from_params.probe_sample``), as one predictions frame; ``models`` and ``label_schemes`` are the
    configs the entry point read (:func:`panel_members`)."""
    items = list(items)
    frames = [probe_items(params, items, label_schemes=label_schemes)]
    for cfg in panel_configs(params, models, absent=absent):
        frames.append(probe_items(params, items, label_schemes=label_schemes, model_cfg=cfg))
    if len(frames) == 1:
        return frames[0]
    import pyarrow as pa

    return to_frame(pa.concat_tables([to_table(f) for f in frames]))
