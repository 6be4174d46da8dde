"""Stage ``report``: the report folder under ``reports/`` and its MLflow run."""

from __future__ import annotations

import logging
import os
from typing import Any

from blindmcq import paths
from blindmcq.html_report import report_from_results
from blindmcq.params import section
from blindmcq.report import build_report
from blindmcq.secrets import scrub
from blindmcq.stages._main import run_stage
from blindmcq.tracking import log_run

log = logging.getLogger(__name__)


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


def main() -> None:
    def body(params: dict[str, Any]) -> None:
        metrics = build_report(
            corpus_dir=paths.CORPUS_DIR,
            baselines_dir=paths.BASELINES_DIR,
            analysis_dir=paths.ANALYSIS_DIR,
            out_dir=paths.REPORT_DIR,
            config=scrub(params),
        )
        report_from_results(paths.REPORT_DIR / "html")
        run_id = log_run(
            section(params, "tracking"),
            run_name=run_name(params),
            config=params,
            metrics=metrics,
            artifacts_dir=paths.REPORT_DIR,
            sweep_id=os.environ.get("BLINDMCQ_SWEEP_ID"),
            tags={"stage": "report"},
            model=str(params["model"]["name"]),
        )
        log.info("report -> %s (%d metrics; MLflow run %s)", paths.REPORT_DIR, len(metrics), run_id)

    run_stage("report", body)


if __name__ == "__main__":
    main()
