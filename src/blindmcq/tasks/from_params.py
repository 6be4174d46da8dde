"""The tasks' calls from the composed config (``params.yaml``): what the stages and the sweep share.

Stages are wiring only and import no other stage; what two of them (or a stage and the sweep) need
lives here: the probe of a sample with the composed config and the interventions' item sample (the
headline presentation, a run's name and tracking are in ``blindmcq.wiring``: a task imports no analysis
or reporting). Nothing here reads ``conf/``: the entry point hands in what the composed ``params`` do not
hold (the label schemes).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq import paths
from blindmcq.datasets.items import Item, read_items
from blindmcq.params import require, section
from blindmcq.tasks.probe import PresentationSetup, run_probe, sample_items

log = logging.getLogger(__name__)
OUT_ROOT = Path("results") / "interventions"


def probe_items(
    params: dict[str, Any],
    items: list[Item],
    *,
    label_schemes: Mapping[str, Mapping[str, Any]],
    condition: dict[str, Any] | None = None,
    model_key: str = "model",
    model_cfg: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """``run_probe`` on ``items`` with the composed config; ``condition`` overrides the condition group,
    ``model_cfg`` the model (default: the config at ``model_key``). ``label_schemes``: every label
    scheme config by name, read by the entry point (``config.files.load_label_schemes``)."""
    return run_probe(
        items,
        model_cfg=model_cfg if model_cfg is not None else section(params, model_key),
        setup=PresentationSetup.from_params(params, condition=condition),
        label_schemes=label_schemes,
        cache_path=require(params, "probe.cache"),
        concurrency=section(params, "probe").get("concurrency"),
    )


def probe_from_params(
    params: dict[str, Any],
    *,
    label_schemes: Mapping[str, Mapping[str, Any]],
    condition: dict[str, Any] | None = None,
    model_key: str = "model",
    items_path: Path = paths.ITEMS,
) -> pd.DataFrame:
    """The probe stage's call: the seeded sample of the corpus (``items_path``), probed with the
    composed config."""
    items = probe_sample(params, items_path)
    return probe_items(params, items, label_schemes=label_schemes, condition=condition, model_key=model_key)


def probe_sample(params: dict[str, Any], items_path: Path = paths.ITEMS) -> list[Item]:
    """The items the probe asks: the seeded ``probe.sample`` of the corpus (``items_path``)."""
    probe = section(params, "probe")
    return sample_items(read_items(items_path), probe.get("sample"), int(probe.get("seed", 0)))


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


def stage_items(params: dict[str, Any], cfg: dict[str, Any], name: str = "intervention") -> list[Item]:
    """The seeded sample of the configured items file: ``probe.sample``, capped by the intervention's own
    ``sample`` (an int is a cost cap, so ``probe.sample=20`` gives 20 items, not the intervention's 30;
    ``sample: null`` = ``probe.sample``). A capped sample is drawn from the probe's sample, so its items
    are probed items (their ordinary answers are already known). Which one applied is logged."""
    probe = params.get("probe") or {}
    own, asked = cfg.get("sample"), probe.get("sample")
    seed = int(probe.get("seed", 0))
    items = sample_items(
        read_items(cfg.get("items") or "results/corpus/items.jsonl"), asked, seed, key="probe.sample"
    )
    sample, key = asked, "probe.sample"
    if own is not None and (asked is None or own < asked):
        sample, key = own, f"{name}.sample"
        items = sample_items(items, own, seed, key=key)
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


def brief(metrics: Mapping[str, Any], limit: int = 6) -> str:
    """A log line's view of a metrics dict: the first ``limit`` figures at 4 significant digits (not a
    dict of 16-digit floats) and how many more the metrics file holds."""
    shown = [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in list(metrics.items())[:limit]]
    more = len(metrics) - len(shown)
    return ", ".join(shown) + (f", ... ({more} more in metrics.json)" if more > 0 else "")
