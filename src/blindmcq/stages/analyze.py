"""Stage ``analyze``: predictions + gate + baselines -> every table (CSV, Markdown), figure and metric
in ``results/analysis/`` (:func:`blindmcq.analysis.outputs.run_analysis` on this project).
Predictions listed in ``analysis.extra_predictions`` (the released format, from any source) are
analysed beside this run's own.
"""

from __future__ import annotations

import logging
from pathlib import Path

from blindmcq import paths
from blindmcq.analysis.outputs import run_analysis
from blindmcq.config.schema import Config
from blindmcq.stages._main import run_stage

log = logging.getLogger(__name__)


def main() -> None:
    def body(config: Config) -> None:
        metrics = run_analysis(config, root=Path("."))
        log.info("%d metrics -> %s", len(metrics), paths.ANALYSIS_DIR)

    run_stage("analyze", body)


if __name__ == "__main__":
    main()
