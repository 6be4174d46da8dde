"""The probe from the composed config, shared by the stages and the sweep: the probe of a sample, the
panel's model configs and manifest, the interventions' item sample.

Each function takes the composed config typed (``config.schema.Config``; a mapping as ``params.yaml``
holds it is checked into one, ``as_config``) and hands the core typed values
(``tasks.probe.PresentationSetup``, ``EngineSettings``, typed model configs). Nothing here reads
``conf/``: the entry point hands in what the composed ``params`` do not hold (the label schemes, the
panel members' model configs).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq import paths
from blindmcq.backends.registry import abilities_of
from blindmcq.config.schema import (
    AnswerPoolIntervention,
    Condition,
    Config,
    Gate,
    HeuristicModel,
    Labels,
    LocalModel,
    ModelSchema,
    Orders,
    Probe,
    RewriteIntervention,
    any_model_config,
    as_config,
    validate_group,
)
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import ConfigError
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, probe_sample, run_probe, sample_items
from blindmcq.vocabulary import Condition as ConditionName

log = logging.getLogger(__name__)
OUT_ROOT = Path("results") / "interventions"


# ---------------------------------------------------------------- the probe from the composed config

Params = Config | Mapping[str, Any]  # the composed config, typed or as params.yaml holds it


def engine_settings(params: Params) -> EngineSettings:
    """How the probe's calls are made, from the typed ``probe`` group."""
    return EngineSettings.from_probe(as_config(params).group("probe"))


def _model(config: Config, key: str) -> ModelSchema:
    """The composed model config at ``key`` (``model`` or ``gate_model``), typed."""
    if key not in ("model", "gate_model"):
        raise ConfigError(key, "expected model or gate_model")
    return config.group(key)


def probe_items(
    params: Params,
    items: Sequence[Item],
    *,
    label_schemes: Mapping[str, Labels],
    condition: Condition | None = None,
    model_key: str = "model",
    model_cfg: ModelSchema | None = None,
) -> pd.DataFrame:
    """``run_probe`` on ``items`` with the composed config; ``condition`` overrides the condition group,
    ``model_cfg`` the model (default: the config at ``model_key``). ``label_schemes``: every label
    scheme config by name, read by the entry point (``config.files.load_label_schemes``)."""
    config = as_config(params)
    return run_probe(
        items,
        model_cfg if model_cfg is not None else _model(config, model_key),
        PresentationSetup.from_params(config, label_schemes, condition=condition),
        engine_settings(config),
    )


def probe_from_params(
    params: Params,
    *,
    label_schemes: Mapping[str, Labels],
    condition: Condition | None = None,
    model_key: str = "model",
    items_path: Path = paths.ITEMS,
) -> pd.DataFrame:
    """The gate's and the sweep's probe: the seeded sample of the corpus (``items_path``), probed with
    the composed config."""
    config = as_config(params)
    items = probe_sample(read_items(items_path), config.group("probe"))
    return probe_items(config, items, label_schemes=label_schemes, condition=condition, model_key=model_key)


Intervention = RewriteIntervention | AnswerPoolIntervention


def stage_items(
    params: Params, own: Intervention | Mapping[str, Any], name: str = "intervention"
) -> list[Item]:
    """The seeded sample of the intervention's items file: ``probe.sample``, capped by the intervention's
    own ``sample`` (an int is a cost cap, so ``probe.sample=20`` gives 20 items, not the intervention's 30;
    ``sample: null`` = ``probe.sample``). A capped sample is drawn from the probe's sample, so its items
    are probed items (their ordinary answers are already known). Which one applied is logged. ``own``:
    the typed intervention (a mapping is checked into one)."""
    config = as_config(params)
    probe: Probe = config.probe or Probe()
    checked: Intervention = (
        own if isinstance(own, RewriteIntervention | AnswerPoolIntervention)
        else validate_group("intervention", own, key=name)
    )  # fmt: skip
    asked, seed = probe.sample, probe.seed
    items = sample_items(read_items(checked.items), asked, seed, key="probe.sample")
    sample, key = asked, "probe.sample"
    if checked.sample is not None and (asked is None or checked.sample < asked):
        sample, key = checked.sample, f"{name}.sample"
        items = sample_items(items, checked.sample, seed, key=key)
    log.info("%s: %d items (%s=%s)", name, len(items), key, sample)
    return items


def probe_condition(
    conditions: Sequence[ConditionName], blind_orders: Orders, full_orders: Orders
) -> Condition:
    """An intervention's condition group: its own conditions and orders (``"all"``, ``"rotations"`` or
    order ids), never forced placement."""
    return Condition(conditions=list(conditions), blind_orders=blind_orders, full_orders=full_orders)


def gate_condition(gate: Gate) -> Condition:
    """The gate model's condition group: blind calls in the gate's ``orders``, no full call, none forced."""
    return Condition(name="gate", conditions=["blind"], blind_orders=gate.orders, full_orders=[])


# ---------------------------------------------------------------- the panel (docs/panel.md)
# The probed model and every ``panel.models`` member on the same items: one model of the panel builds the
# gate (``gate_model``); the others are scored on its accepted items, so the report can show whether a
# gate built on one model stays open to the next. The probe itself is ``tasks.probe.probe_panel``.


def _listed(config: Config) -> list[str]:
    """``panel.models`` as the typed ``panel`` group holds it (none without a panel)."""
    return list(config.panel.models) if config.panel is not None else []


def _gate_name(config: Config) -> str | None:
    return config.gate_model.name if config.gate_model is not None else None


def panel_members(params: Params) -> list[str]:
    """The ``panel.models`` names whose model config the entry point loads (``config.files.load_models``):
    all but the probed model and the member named like ``gate_model`` (both composed in ``params``)."""
    config = as_config(params)
    composed = {_model(config, "model").name, _gate_name(config)}
    names = _listed(config)
    return [n for i, n in enumerate(names) if n not in composed and n not in names[:i]]


def panel_configs(
    params: Params, models: Mapping[str, ModelSchema | Mapping[str, Any]], *, absent: str | None = None
) -> list[ModelSchema]:
    """The model configs of ``panel.models`` (none without a panel), in the order listed, typed.

    ``models`` holds the configs of :func:`panel_members`, read by the entry point. A name listed twice
    is a config error naming ``panel.models``; the probed model, when listed (e.g. ``-S model=longest``
    with the default panel), is probed once, as ``model``; the member named like ``gate_model`` is the
    composed ``gate_model`` config. ``absent`` (``statutes.language.lexical_absent``): why lexical search
    cannot measure this bank; its members (backend ``lexical``) are then left out."""
    config = as_config(params)
    names = _listed(config)
    probed = _model(config, "model").name
    gate_model = config.gate_model
    seen: set[str] = set()
    configs = []
    for name in names:
        if name == probed:
            log.info("panel member %s is the probed model: probed once, with the model config", name)
            continue
        if name in seen:
            raise ConfigError("panel.models", f"lists {name!r} twice")
        seen.add(name)
        if gate_model is not None and gate_model.name == name:
            cfg = gate_model
        elif name in models:
            cfg = any_model_config(models[name])
        else:
            raise ConfigError("panel.models", f"no model config was read for {name!r}")
        if absent and abilities_of(cfg).reads_statutes:
            log.warning("panel member %s left out: %s", name, absent)
            continue
        configs.append(cfg)
    return configs


NORMS = {"char": "per character", "token": "per token", "raw": "raw"}


def describe_model(model: ModelSchema | Mapping[str, Any]) -> str:
    """A few words for the report: the config's ``description``, else its scoring or strategy; a model
    config read as a mapping (``config.files.load_model_file``) is typed here."""
    cfg = any_model_config(model)
    if cfg.description:
        return str(cfg.description)
    if isinstance(cfg, LocalModel):
        if cfg.scoring == "cloze":
            return f"cloze, {NORMS.get(cfg.cloze_norm, cfg.cloze_norm)}"
        return "letter scoring"
    if isinstance(cfg, HeuristicModel) and cfg.strategy:
        return f"option-only: {cfg.strategy}"
    return ""


def panel_manifest(
    params: Params, models: Mapping[str, ModelSchema | Mapping[str, Any]], *, absent: str | None = None
) -> dict[str, Any]:
    """What ``results/predictions/models.json`` holds: each probed model's role, a description for the
    report, which panel members are the probed model's weights under another scoring, and which read the
    option texts alone (``option_only``: their blind and full answers are the same by construction, so
    a blind-full correlation across models leaves them out), and (``absent``) the lexical members left
    out and why."""
    config = as_config(params)
    model = _model(config, "model")
    out: dict[str, Any] = {"model": model.name, "models": {model.name: describe_model(model)}}
    variants = []
    option_only = [model.name] if abilities_of(model).needs_option_texts else []
    configs = panel_configs(config, models, absent=absent)
    for cfg in configs:
        out["models"][cfg.name] = describe_model(cfg)
        # the probed model's weights under another scoring: local models of one path
        if isinstance(cfg, LocalModel) and isinstance(model, LocalModel) and cfg.path == model.path:
            variants.append(cfg.name)
        if abilities_of(cfg).needs_option_texts:
            option_only.append(cfg.name)
    out["scoring_variants"] = variants
    out["option_only"] = option_only
    kept = {cfg.name for cfg in configs}
    left_out = [n for n in _listed(config) if n not in kept and n != model.name]
    if absent and left_out:  # only then: a run with every member keeps its manifest as it was
        out["absent"] = dict.fromkeys(left_out, absent)
    return out
