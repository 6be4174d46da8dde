"""What the analysis and report stages share with the sweep: the headline presentation the analysis
reads, a run's name, a log line of metrics, and tracking. Apart from :mod:`blindmcq.wiring.probe`, so
the analysis and report stages do not depend on the probe's code (backends, engine, tasks)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blindmcq.secrets import scrub_text


def brief(metrics: Mapping[str, Any], limit: int = 6) -> str:
    """A log line's view of a metrics dict: the first ``limit`` figures at 4 significant digits (not a
    dict of 16-digit floats) and how many more the metrics file holds."""
    shown = [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in list(metrics.items())[:limit]]
    more = len(metrics) - len(shown)
    return ", ".join(shown) + (f", ... ({more} more in metrics.json)" if more > 0 else "")


def run_name(params: dict[str, Any]) -> str:
    """What tells runs apart: the model (and its scoring), the bank, the presentation, and the sample."""
    keys = ("model", "dataset", "prompt", "labels", "protocol", "reasoning", "condition")
    parts = [str(params[k]["name"]) for k in keys if isinstance(params.get(k), dict) and "name" in params[k]]
    model = params.get("model") or {}
    if model.get("scoring", "letter") != "letter":
        parts[0] += f"[{model['scoring']}]"
    gate_model = (params.get("gate_model") or {}).get("name")
    if gate_model and gate_model != model.get("name"):
        parts.append(f"gate={gate_model}")
    probe = params.get("probe") or {}
    if "sample" in probe or "seed" in probe:
        parts.append(f"n={probe.get('sample') or 'all'},seed={probe.get('seed', 0)}")
    return "/".join(parts)


def stage_run_name(stage: str, config: Mapping[str, Any]) -> str:
    """A pipeline stage's run name: the stage, then what tells pipeline runs apart, short
    (``rewrite·exp-one·customs-default·longest``): the DVC experiment's name under ``dvc exp run``, the
    bank, then the probed model."""

    def name(group: str) -> str:
        value = config.get(group)
        return str(value.get("name", "")) if isinstance(value, Mapping) else ""

    exp = scrub_text(os.environ.get("DVC_EXP_NAME", ""))
    parts = [stage, exp, name("dataset"), name("model")]
    return scrub_text("·".join(p for p in parts if p))


def track(params: dict[str, Any], name: str, metrics: dict[str, float], out_dir: Path) -> None:
    """Log a stage's metrics and outputs to MLflow when ``tracking`` is enabled with a URI."""
    tracking = params.get("tracking") or {}
    if tracking.get("enabled") and tracking.get("uri"):
        from blindmcq.reporting.tracking import log_run, stage_parent

        log_run(
            tracking, run_name=stage_run_name(name, params), config=params, metrics=metrics,
            artifacts_dir=out_dir, parent=stage_parent(params), tags={"stage": name},
            model=params.get("model", {}).get("name"),
        )  # fmt: skip
