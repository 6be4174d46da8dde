"""The probe from the composed config, shared by the stages and the sweep: the probe of a sample, the
panel's model configs and manifest, the interventions' item sample.

The edge between the composed config (``params.yaml``, a mapping) and the core: each function reads what
it needs from ``params`` once and hands the core typed values (``tasks.probe.PresentationSetup``,
``EngineSettings``). Nothing here reads ``conf/``: the entry point hands in what the composed ``params``
do not hold (the label schemes, the panel members' model configs).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq import paths
from blindmcq.backends.registry import abilities_of
from blindmcq.config.schema import Labels, Panel, Probe, validate_group
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import ConfigError
from blindmcq.params import require, section
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, probe_sample, run_probe, sample_items

log = logging.getLogger(__name__)
OUT_ROOT = Path("results") / "interventions"


# ---------------------------------------------------------------- the probe from the composed config


def engine_settings(params: dict[str, Any]) -> EngineSettings:
    """How the probe's calls are made, from the typed ``probe`` group (``probe.cache`` must be set)."""
    require(params, "probe.cache")  # as before the typed group: no silent default cache
    return EngineSettings.from_probe(section(params, "probe"))


def probe_items(
    params: dict[str, Any],
    items: Sequence[Item],
    *,
    label_schemes: Mapping[str, Labels | Mapping[str, Any]],
    condition: Mapping[str, Any] | None = None,
    model_key: str = "model",
    model_cfg: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """``run_probe`` on ``items`` with the composed config; ``condition`` overrides the condition group,
    ``model_cfg`` the model (default: the config at ``model_key``). ``label_schemes``: every label
    scheme config by name, read by the entry point (``config.files.load_label_schemes``)."""
    return run_probe(
        items,
        model_cfg if model_cfg is not None else section(params, model_key),
        PresentationSetup.from_params(params, label_schemes, condition=condition),
        engine_settings(params),
    )


def probe_from_params(
    params: dict[str, Any],
    *,
    label_schemes: Mapping[str, Labels | Mapping[str, Any]],
    condition: Mapping[str, Any] | None = None,
    model_key: str = "model",
    items_path: Path = paths.ITEMS,
) -> pd.DataFrame:
    """The gate's and the sweep's probe: the seeded sample of the corpus (``items_path``), probed with
    the composed config."""
    items = probe_sample(read_items(items_path), section(params, "probe"))
    return probe_items(params, items, label_schemes=label_schemes, condition=condition, model_key=model_key)


def stage_items(params: dict[str, Any], cfg: Mapping[str, Any], name: str = "intervention") -> list[Item]:
    """The seeded sample of the configured items file: ``probe.sample``, capped by the intervention's own
    ``sample`` (an int is a cost cap, so ``probe.sample=20`` gives 20 items, not the intervention's 30;
    ``sample: null`` = ``probe.sample``). A capped sample is drawn from the probe's sample, so its items
    are probed items (their ordinary answers are already known). Which one applied is logged."""
    probe: Probe = validate_group("probe", params.get("probe") or {})
    own, asked, seed = cfg.get("sample"), probe.sample, probe.seed
    items = sample_items(read_items(cfg.get("items") or paths.ITEMS), asked, seed, key="probe.sample")
    sample, key = asked, "probe.sample"
    if own is not None and (asked is None or own < asked):
        sample, key = own, f"{name}.sample"
        items = sample_items(items, own, seed, key=key)
    log.info("%s: %d items (%s=%s)", name, len(items), key, sample)
    return items


def probe_condition(
    conditions: Sequence[str], blind_orders: Any = "all", full_orders: Any = ("rot0",)
) -> dict[str, Any]:
    """An intervention's condition group: its own conditions and orders, never forced placement."""
    return {
        "conditions": list(conditions),
        "blind_orders": blind_orders,
        "full_orders": list(full_orders),
        "forced": False,
    }


# ---------------------------------------------------------------- the panel (docs/panel.md)
# The probed model and every ``panel.models`` member on the same items: one model of the panel builds the
# gate (``gate_model``); the others are scored on its accepted items, so the report can show whether a
# gate built on one model stays open to the next. The probe itself is ``tasks.probe.probe_panel``.


def _listed(params: dict[str, Any]) -> list[str]:
    """``panel.models`` as the typed ``panel`` group holds it (none without a panel)."""
    panel: Panel = validate_group("panel", params.get("panel") or {})
    return list(panel.models)


def panel_members(params: dict[str, Any]) -> list[str]:
    """The ``panel.models`` names whose model config the entry point loads (``config.files.load_models``):
    all but the probed model and the member named like ``gate_model`` (both composed in ``params``)."""
    composed = {require(params, "model.name"), (params.get("gate_model") or {}).get("name")}
    names = _listed(params)
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
    names = _listed(params)
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


def describe_model(cfg: Mapping[str, Any]) -> str:
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
    left_out = [n for n in _listed(params) if n not in kept and n != model["name"]]
    if absent and left_out:  # only then: a run with every member keeps its manifest as it was
        out["absent"] = dict.fromkeys(left_out, absent)
    return out


def _weights(cfg: Mapping[str, Any]) -> tuple[Any, Any]:
    return cfg.get("backend"), cfg.get("path")
