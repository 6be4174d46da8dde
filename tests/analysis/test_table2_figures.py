"""Table 2's figures come from its ``TableSpec``: the report and the audit both take them through
``summary_figures``, and neither names a ``table2/`` figure itself."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from blindmcq.analysis.tables import SPECS, rounded, summary_figures

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "blindmcq"


def test_each_strategy_row_gives_its_figure_as_the_table_rounds_it() -> None:
    summary = pd.DataFrame(
        {"strategy": ["longest", "constant_0", "lexical_search"], "accuracy": [0.41249, 0.2500001, 1 / 3]}
    )
    got = summary_figures(summary)
    assert got == {
        "table2/longest": rounded(0.41249),
        "table2/constant_0": 0.25,
        "table2/lexical_search": 0.333,
    }
    assert SPECS["table2"].summary_metrics is not None
    assert summary_figures(summary.iloc[:0]) == {}


def test_a_missing_accuracy_stays_missing() -> None:
    got = summary_figures(pd.DataFrame({"strategy": ["longest"], "accuracy": [math.nan]}))
    assert math.isnan(got["table2/longest"])


def test_the_report_and_the_audit_name_no_table2_figure_themselves() -> None:
    for rel in ("reporting/markdown.py", "auditing/audit.py"):
        text = (PACKAGE / rel).read_text(encoding="utf-8")
        assert 'f"table2/' not in text, rel
        assert "summary_figures(" in text, rel
