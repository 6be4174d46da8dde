"""The presentation this run's headline numbers are measured on, from the composed config."""

from __future__ import annotations

from typing import Any

from blindmcq.analysis.frame import Baseline


def baseline_from_params(params: dict[str, Any], orders: Any = "all") -> Baseline:
    protocol = params["protocol"]
    md = protocol.get("extraction") == "match"
    labels = protocol.get("labels") or params["labels"]["name"]
    return Baseline(
        phrasing=params["prompt"]["name"],
        labels=labels,
        protocol="md" if md else "sl",
        reasoning=params["reasoning"]["name"],
        orders=orders,
    )
