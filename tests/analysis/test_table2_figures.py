"""Table 2's figures come from its ``TableSpec``: the report and the audit both take them through
``summary_figures`` and ``facts_figures``, and neither names a ``table2/`` or ``bank/`` length figure
itself."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from blindmcq.analysis.tables import TABLES, facts_figures, rounded, summary_figures

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
    assert next(spec for spec in TABLES if spec.key == "table2").summary_metrics is not None
    assert summary_figures(summary.iloc[:0]) == {}


def test_a_missing_accuracy_stays_missing() -> None:
    got = summary_figures(pd.DataFrame({"strategy": ["longest"], "accuracy": [math.nan]}))
    assert math.isnan(got["table2/longest"])


def test_the_bank_length_figure_is_rounded_as_the_table_shows_it() -> None:
    got = facts_figures({"key_minus_distractor_chars": 12.34567, "key_chars_mean": 50.0})
    assert got == {"bank/key_minus_distractor_chars": 12.346}
    missing = facts_figures({"key_minus_distractor_chars": math.nan})
    assert math.isnan(missing["bank/key_minus_distractor_chars"])


def test_the_report_and_the_audit_name_no_table2_figure_themselves() -> None:
    for rel in ("reporting/markdown.py", "auditing/audit.py"):
        text = (PACKAGE / rel).read_text(encoding="utf-8")
        assert 'f"table2/' not in text, rel
        assert '"bank/key_minus_distractor_chars"' not in text, rel
        assert "summary_figures(" in text and "facts_figures(" in text, rel
