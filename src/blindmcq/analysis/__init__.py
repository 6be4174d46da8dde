"""Analysis of prediction rows: statistics, the gate, per-model metrics, the paper's tables and figures.

Typical use (what the ``gate``, ``analyze`` and ``report`` stages call)::

    preds = read_analysis_frame("predictions.parquet")
    g = gate(preds, gate_model="gemma3-270m", k=5, orders="all")
    a = analyze(preds, gate=g, base=Baseline(), sample_sizes=[400], seed=0)
    tables = build_tables(a, baselines=baselines, items=items)
    write_tables("reports/run", tables); write_figures("reports/run", a, banks=..., bank_accuracy=...)
    metrics = headline_metrics(a)
"""

from __future__ import annotations

import importlib
from typing import Any

from blindmcq.analysis.frame import Baseline, prepare, read_analysis_frame
from blindmcq.analysis.gate import GateResult, gate, read_gate, smallest_significant_k, write_gate
from blindmcq.analysis.metrics import Analysis, analyze, bank_blind_accuracy, item_sets, split_halves
from blindmcq.analysis.tables import Table, build_tables, headline_metrics, write_tables


def __getattr__(name: str) -> Any:
    # The figures (matplotlib) load on first use (PEP 562), so importing the statistics, the gate or
    # the tables never pulls in a plotting backend.
    if name in ("write_figures", "figures"):
        figures = importlib.import_module("blindmcq.analysis.figures")
        return figures if name == "figures" else figures.write_figures
    raise AttributeError(f"module 'blindmcq.analysis' has no attribute {name!r}")


__all__ = [
    "Analysis",
    "Baseline",
    "GateResult",
    "Table",
    "analyze",
    "bank_blind_accuracy",
    "build_tables",
    "gate",
    "headline_metrics",
    "item_sets",
    "prepare",
    "read_analysis_frame",
    "read_gate",
    "smallest_significant_k",
    "split_halves",
    "write_figures",
    "write_gate",
    "write_tables",
]
