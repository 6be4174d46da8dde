"""What the analysis and report stages share with the sweep: the headline presentation the analysis
reads and a log line of metrics. Apart from :mod:`blindmcq.wiring.probe`, so the analysis and report
stages do not depend on the probe's code (backends, engine, tasks). Run names and MLflow logging read
the composed config as MLflow logs it, at the edge: ``stages._tracking`` and ``sweep``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blindmcq.analysis.frame import Baseline
from blindmcq.config.schema import Config, Labels, Protocol, as_config


def brief(metrics: Mapping[str, Any], limit: int = 6) -> str:
    """A log line's view of a metrics dict: the first ``limit`` figures at 4 significant digits (not a
    dict of 16-digit floats) and how many more the metrics file holds."""
    shown = [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in list(metrics.items())[:limit]]
    more = len(metrics) - len(shown)
    return ", ".join(shown) + (f", ... ({more} more in metrics.json)" if more > 0 else "")


def baseline_from_params(params: Config | Mapping[str, Any], orders: Any = "all") -> Baseline:
    """The headline presentation of the composed config (phrasing, labels, protocol, reasoning)."""
    config = as_config(params)
    protocol: Protocol = config.group("protocol")
    labels: Labels = config.group("labels")
    return Baseline(
        phrasing=config.group("prompt").name,
        labels=protocol.labels or labels.name,
        protocol="md" if protocol.extraction == "match" else "sl",
        reasoning=config.group("reasoning").name,
        orders=orders,
    )
