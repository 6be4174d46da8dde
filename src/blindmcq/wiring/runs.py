"""A stage's log line of metrics (``brief``). Run names and MLflow logging read the composed config as
MLflow logs it, at the edge: ``stages._tracking`` and ``sweep``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def brief(metrics: Mapping[str, Any], limit: int = 6) -> str:
    """A log line's view of a metrics dict: the first ``limit`` figures at 4 significant digits (not a
    dict of 16-digit floats) and how many more the metrics file holds."""
    shown = [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in list(metrics.items())[:limit]]
    more = len(metrics) - len(shown)
    return ", ".join(shown) + (f", ... ({more} more in metrics.json)" if more > 0 else "")
