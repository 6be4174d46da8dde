"""Stage ``rewrite``: items -> rewritten bank -> blind probe before and after -> comparison.

Reads ``intervention.rewrite`` from params.yaml, or ``conf/intervention/rewrite.yaml`` when the
composed config has none. Writes under ``results/interventions/rewrite/``: ``items.jsonl`` (the new
bank version, provenance in ``meta.rewrite``), ``diff.csv``/``diff.md``, ``predictions_before.parquet``,
``predictions_after.parquet``, ``comparison.csv``/``comparison.md`` and ``metrics.json``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.atomic import write_text
from blindmcq.config.files import load_group
from blindmcq.errors import ConfigError
from blindmcq.interventions.compare import rewrite_comparison, rewrite_table
from blindmcq.interventions.rewrite import RewriteConfig, rewrite_items, write_diff
from blindmcq.items import Item, read_items, write_items
from blindmcq.params import require, section
from blindmcq.predictions import write_predictions
from blindmcq.probe import sample_items
from blindmcq.stages._main import run_stage
from blindmcq.stages.probe import probe_items

log = logging.getLogger(__name__)
OUT_ROOT = Path("results") / "interventions"


def intervention_cfg(params: dict[str, Any], name: str) -> dict[str, Any]:
    """``params['intervention'][name]``, else the shipped default ``conf/intervention/<name>.yaml``."""
    cfg = (params.get("intervention") or {}).get(name)
    if cfg is None:
        cfg = load_group("intervention", name)
    if not isinstance(cfg, dict):
        raise ConfigError(f"intervention.{name}", "expected a mapping")
    return dict(cfg)


def stage_items(params: dict[str, Any], cfg: dict[str, Any], name: str = "intervention") -> list[Item]:
    """The seeded sample of the configured items file: ``probe.sample``, capped by the intervention's own
    ``sample`` (an int is a cost cap, so ``probe.sample=20`` gives 20 items, not the intervention's 30;
    ``sample: null`` = ``probe.sample``). Which one applied is logged."""
    probe = params.get("probe") or {}
    own, asked = cfg.get("sample"), probe.get("sample")
    if own is not None and (asked is None or own < asked):
        sample, key = own, f"{name}.sample"
    else:
        sample, key = asked, "probe.sample"
    items = sample_items(
        read_items(cfg.get("items") or "results/corpus/items.jsonl"),
        sample,
        int(probe.get("seed", 0)),
        key=key,
    )
    log.info("%s: %d items (%s=%s)", name, len(items), key, sample)
    return items


def probe_condition(
    conditions: list[str], blind_orders: Any = "all", full_orders: Any = ("rot0",)
) -> dict[str, Any]:
    return {
        "conditions": list(conditions),
        "blind_orders": blind_orders,
        "full_orders": list(full_orders),
        "forced": False,
    }


def probe(params: dict[str, Any], items: list[Item], condition: dict[str, Any]) -> pd.DataFrame:
    return probe_items(params, items, condition=condition)


def track(params: dict[str, Any], name: str, metrics: dict[str, float], out_dir: Path) -> None:
    tracking = params.get("tracking") or {}
    if tracking.get("enabled") and tracking.get("uri"):
        from blindmcq.tracking import log_run

        run_name = f"{name}/{params.get('model', {}).get('name', '')}"
        log_run(
            tracking, run_name=run_name, config=params, metrics=metrics, artifacts_dir=out_dir,
            sweep_id=os.environ.get("BLINDMCQ_SWEEP_ID"), tags={"stage": name},
        )  # fmt: skip


def rewrite_stage(params: dict[str, Any], out_dir: Path = OUT_ROOT / "rewrite") -> dict[str, float]:
    cfg = intervention_cfg(params, "rewrite")
    if cfg.get("model") is None:
        cfg["model"] = section(params, "model")
    if cfg.get("statutes") is None and (params.get("statutes") or {}).get("path"):
        cfg["statutes"] = params["statutes"]["path"]
    conf = RewriteConfig.from_cfg(cfg)
    items = stage_items(params, cfg, "intervention.rewrite")
    rewritten = rewrite_items(items, conf, cache=require(params, "probe.cache"), progress=True)
    write_items(out_dir / "items.jsonl", rewritten)
    diff = write_diff(rewritten, out_dir)
    conditions = list(cfg.get("conditions") or ["blind"])
    condition = probe_condition(conditions, cfg.get("blind_orders", "all"), cfg.get("full_orders", ["rot0"]))
    before, after = probe(params, items, condition), probe(params, rewritten, condition)
    write_predictions(before, out_dir / "predictions_before.parquet")
    write_predictions(after, out_dir / "predictions_after.parquet")
    comparison = rewrite_comparison(before, after, conditions)
    table = rewrite_table(comparison)
    write_text(out_dir / "comparison.csv", comparison.to_csv(index=False))
    write_text(out_dir / "comparison.md", table.markdown())
    metrics: dict[str, float] = {"items": len(items), "distractors_changed": int(diff["changed"].sum())}
    for row in comparison.itertuples():
        for field in ("acc", "lo", "hi", "chance", "p_above", "p_below"):
            metrics[f"{row.condition}_{row.version}_{field}"] = float(getattr(row, field))
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    track(params, "rewrite", metrics, out_dir)
    return metrics


def main() -> None:
    def body(params: dict[str, Any]) -> None:
        metrics = rewrite_stage(params)
        log.info("rewrite -> %s: %s", OUT_ROOT / "rewrite", metrics)

    run_stage("rewrite", body)


if __name__ == "__main__":
    main()
