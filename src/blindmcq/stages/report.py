"""Stage ``report``: the report folder under ``reports/`` and its MLflow run."""

from __future__ import annotations

import logging

from blindmcq import paths
from blindmcq.config.schema import Config, as_written
from blindmcq.reporting.html import report_from_results
from blindmcq.reporting.markdown import build_report, headline_figures
from blindmcq.reporting.tracking import log_run, stage_parent
from blindmcq.stages._main import run_stage
from blindmcq.stages._tracking import roles, stage_run_name

log = logging.getLogger(__name__)


def main() -> None:
    def body(config: Config) -> None:
        metrics = build_report(
            corpus_dir=paths.CORPUS_DIR,
            baselines_dir=paths.BASELINES_DIR,
            analysis_dir=paths.ANALYSIS_DIR,
            out_dir=paths.REPORT_DIR,
            config=config,
        )
        report_from_results(paths.REPORT_DIR / "html")
        written = as_written(config)  # what MLflow logs
        run_id = log_run(
            config.group("tracking"),
            run_name=stage_run_name("report", written),  # beside rewrite·..., answerpool·...
            config=written,
            metrics=metrics,
            artifacts_dir=paths.REPORT_DIR,
            parent=stage_parent(written),  # this pipeline run's parent (or BLINDMCQ_SWEEP_ID's)
            parent_metrics=headline_figures(metrics),
            tags={"stage": "report"},
            model=config.group("model").name,
            **roles(config),
        )
        log.info("report -> %s (%d metrics; MLflow run %s)", paths.REPORT_DIR, len(metrics), run_id)

    run_stage("report", body)


if __name__ == "__main__":
    main()
