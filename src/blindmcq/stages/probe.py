"""Stage ``probe``: items -> the answers of the configured model and of the panel -> ``results/predictions/``.

The panel (``panel.models``, conf/panel/) lists further model configs (``conf/model/<name>.yaml``) probed
on the same items with the same presentations; their rows share the predictions files, told apart by the
``model`` column. A member named like ``gate_model`` takes the composed ``gate_model`` config (so
``-S gate_model.seed=1`` reaches it), and the gate stage then reads its blind calls from here.

Writes ``predictions.parquet`` (the released format) and ``predictions.jsonl`` (the same rows); what
varies per run goes to ``results/calls/predictions/`` (not a DVC output): the call log and ``calls.json``
(how many calls were made, served from the cache, failed).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pandas as pd

from blindmcq import paths
from blindmcq.atomic import write_text
from blindmcq.backends.registry import load_model_config
from blindmcq.errors import ConfigError
from blindmcq.items import Item, read_items
from blindmcq.params import require, section
from blindmcq.predictions import (
    call_log_path,
    to_frame,
    to_table,
    write_predictions,
    write_predictions_jsonl,
)
from blindmcq.probe import run_probe, sample_items
from blindmcq.stages._main import run_stage

log = logging.getLogger(__name__)


def probe_items(
    params: dict[str, Any],
    items: list[Item],
    *,
    condition: dict[str, Any] | None = None,
    model_key: str = "model",
    model_cfg: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """``run_probe`` on ``items`` with the composed config; ``condition`` overrides the condition group,
    ``model_cfg`` the model (default: the config at ``model_key``)."""
    return run_probe(
        items,
        model_cfg=model_cfg if model_cfg is not None else section(params, model_key),
        prompt=section(params, "prompt"),
        labels=section(params, "labels"),
        reasoning=section(params, "reasoning"),
        condition=condition if condition is not None else section(params, "condition"),
        protocol_cfg=section(params, "protocol"),
        cache_path=require(params, "probe.cache"),
        concurrency=section(params, "probe").get("concurrency"),
    )


def probe_from_params(
    params: dict[str, Any], *, condition: dict[str, Any] | None = None, model_key: str = "model"
) -> pd.DataFrame:
    """The probe stage's call: the seeded sample of the corpus, probed with the composed config."""
    probe = section(params, "probe")
    items = sample_items(read_items(paths.ITEMS), probe.get("sample"), int(probe.get("seed", 0)))
    return probe_items(params, items, condition=condition, model_key=model_key)


def panel_configs(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The model configs of ``panel.models`` (none without a panel), in the order listed.

    A name listed twice is a config error naming ``panel.models``; the probed model, when listed (e.g.
    ``-S model=longest`` with the default panel), is probed once, as ``model``; the member named like
    ``gate_model`` is the composed ``gate_model`` config."""
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
        configs.append(dict(gate_model) if gate_model.get("name") == name else load_model_config(name))
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


def panel_manifest(params: dict[str, Any]) -> dict[str, Any]:
    """What ``results/predictions/models.json`` holds: each probed model's role, a description for the
    report, and which panel members are the probed model's weights under another scoring."""
    model = section(params, "model")
    out: dict[str, Any] = {"model": model["name"], "models": {model["name"]: describe_model(model)}}
    variants = []
    for cfg in panel_configs(params):
        out["models"][cfg["name"]] = describe_model(cfg)
        same_weights = cfg.get("backend") == model.get("backend") and cfg.get("path") == model.get("path")
        if same_weights and "scoring" in cfg and "scoring" in model:
            variants.append(cfg["name"])
    out["scoring_variants"] = variants
    return out


def probe_panel(params: dict[str, Any]) -> pd.DataFrame:
    """The probed model and every panel member on the seeded sample, as one predictions frame."""
    probe = section(params, "probe")
    items = sample_items(read_items(paths.ITEMS), probe.get("sample"), int(probe.get("seed", 0)))
    frames = [probe_items(params, items)]
    for cfg in panel_configs(params):
        frames.append(probe_items(params, items, model_cfg=cfg))
    if len(frames) == 1:
        return frames[0]
    import pyarrow as pa

    return to_frame(pa.concat_tables([to_table(f) for f in frames]))


def call_counts(predictions: pd.DataFrame) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "calls": len(predictions),
        "from_cache": int(predictions["cached"].sum()),
        "new_calls": int((~predictions["cached"]).sum()),
        **{f"status_{k}": int(v) for k, v in predictions["parse_status"].value_counts().items()},
    }
    if predictions["model"].nunique() > 1:  # a panel: the same counts per model
        counts["per_model"] = {
            str(model): {"calls": len(rows), "new_calls": int((~rows["cached"]).sum())}
            for model, rows in predictions.groupby("model", observed=True, sort=False)
        }
    return counts


def write_probe_outputs(predictions: pd.DataFrame, out_dir: Any) -> dict[str, Any]:
    write_predictions(predictions, out_dir / "predictions.parquet")
    write_predictions_jsonl(predictions, out_dir / "predictions.jsonl")
    counts = call_counts(predictions)
    log = call_log_path(out_dir / "calls.json")  # varies per run: beside the results, not hashed
    calls = log.with_suffix(".json") if log is not None else out_dir / "calls.json"
    calls.parent.mkdir(parents=True, exist_ok=True)
    write_text(calls, json.dumps(counts, indent=2) + "\n")
    return counts


def main() -> None:
    def body(params: dict[str, Any]) -> None:
        predictions = probe_panel(params)
        counts = write_probe_outputs(predictions, paths.PREDICTIONS_DIR)
        manifest = json.dumps(panel_manifest(params), indent=2, ensure_ascii=False)
        write_text(paths.PREDICTIONS_DIR / "models.json", manifest + "\n")
        log.info("predictions -> %s: %s", paths.PREDICTIONS_DIR, counts)

    run_stage("probe", body)


if __name__ == "__main__":
    main()
