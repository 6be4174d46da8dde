"""A stage's MLflow run name and its tracking. They read the composed config as MLflow logs it (the
mapping ``params.yaml`` holds, group names and the ``tracking`` group): the edge, beside the stages."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blindmcq.config.schema import Config, as_written
from blindmcq.secrets import scrub_text


def stage_run_name(stage: str, config: Mapping[str, Any]) -> str:
    """A pipeline stage's run name: the stage, then what tells pipeline runs apart, short
    (``rewrite·exp-one·customs-default·longest``): the DVC experiment's name under ``dvc exp run``, the
    bank, then the probed model."""

    def name(group: str) -> str:
        value = config.get(group)  # a group without a name gives no part
        return str(value["name"]) if isinstance(value, Mapping) and "name" in value else ""

    exp = scrub_text(os.environ.get("DVC_EXP_NAME", ""))
    parts = [stage, exp, name("dataset"), name("model")]
    return scrub_text("·".join(p for p in parts if p))


def roles(config: Config) -> dict[str, Any]:
    """The other models' roles ``log_run`` names metrics by: the gate model, and the panel members (None
    with no panel group: roles unknown)."""
    return {
        "gate_model": config.gate_model.name if config.gate_model is not None else None,
        "panel": list(config.panel.models) if config.panel is not None else None,
    }


def track(config: Config, name: str, metrics: dict[str, float], out_dir: Path) -> None:
    """Log a stage's metrics and outputs to MLflow when ``tracking`` is enabled with a URI."""
    tracking = config.tracking
    if tracking is not None and tracking.enabled and tracking.uri:
        from blindmcq.reporting.tracking import log_run, stage_parent

        written = as_written(config)  # what MLflow logs
        log_run(
            tracking, run_name=stage_run_name(name, written), config=written, metrics=metrics,
            artifacts_dir=out_dir, parent=stage_parent(written), tags={"stage": name},
            model=config.model.name if config.model is not None else None, **roles(config),
        )  # fmt: skip
