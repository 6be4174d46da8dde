"""What the report leaves out and says why: tables with nothing to compare show no rows and one line; r
over fewer than 6 models is shown untested (no p, no interval) in the correlation table and Figure 2,
whose point labels never overlap."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.text import Annotation

from blindmcq.analysis.figures import figure_2
from blindmcq.analysis.frame import read_analysis_frame
from blindmcq.analysis.gate import read_gate
from blindmcq.analysis.metrics import analyze
from blindmcq.analysis.tables import MIN_MODELS_TESTED, build_tables, correlation_table, write_tables

RELEASE = Path(__file__).resolve().parents[2] / "releases" / "default"


@pytest.fixture(scope="module")
def predictions() -> pd.DataFrame:
    return read_analysis_frame(RELEASE / "results/predictions/predictions.parquet")


@pytest.fixture(scope="module")
def release_analysis(predictions):
    """As the pipeline analyses the default run: the gate model and the option-only models are left out
    of r (4 models remain)."""
    g = read_gate(RELEASE / "results/gate/gate.json")
    return analyze(predictions, gate=g, correlation_exclude=["lexical", "longest", "most-words"])


def test_tables_with_one_value_show_no_rows_and_say_why(release_analysis, tmp_path: Path) -> None:
    """The default run has one phrasing, one label scheme and one reasoning mode: Tables 6, 7 and 9 would
    repeat Table 3 beside a spread of 0. Each is a heading and one line; its CSV keeps the rows."""
    tables = build_tables(release_analysis)
    for name, only in (("table6", "phrasing original"), ("table7", "labels latin"), ("table9", "direct")):
        table = tables[name]
        assert table.shown.empty and not table.frame.empty, name
        assert table.note.startswith("No data: only one ") and f"({only})" in table.note, table.note
        body = [line for line in table.markdown().splitlines() if line.strip()]
        assert len(body) == 2 and not any(line.startswith("|") for line in body), body
    assert tables["table10"].shown.empty and tables["table10"].note.startswith("No data:")
    assert not tables["table8"].shown.empty  # a table with something to show keeps its rows
    paths = write_tables(tmp_path, tables)
    assert len(pd.read_csv(paths["table6.csv"])) == len(tables["table6"].frame)


def _correlation(n_models: int) -> SimpleNamespace:
    frame = pd.DataFrame({"kind": ["same items", "disjoint halves"], "r": [0.835, -0.96],
                          "lo": [-0.638, -0.999], "hi": [0.996, 0.015], "p": [0.165, 0.04],
                          "n_models": [n_models, n_models]})  # fmt: skip
    return SimpleNamespace(correlation=frame, headline_set="accepted", correlation_excluded=[])


def test_r_over_fewer_than_six_models_has_no_p_and_no_interval() -> None:
    few = correlation_table(_correlation(MIN_MODELS_TESTED - 2))
    assert list(few.shown.columns) == ["Items", "r", "Models"]
    assert list(few.shown["r"]) == ["0.835", "-0.960"]  # the figure itself is unchanged
    assert "r over 4 models is not tested (no p, no Fisher-z interval)" in few.note
    assert "0.040" not in few.markdown() and "[" not in few.markdown().split("\n\n")[1]
    enough = correlation_table(_correlation(MIN_MODELS_TESTED))
    assert list(enough.shown.columns) == ["Items", "r [95% CI]", "p", "Models"]
    assert enough.shown["p"].iloc[1] == "0.040" and "not tested" not in enough.note


def _labels(fig) -> list:
    ax = fig.axes[0]
    return [t for t in ax.texts if isinstance(t, Annotation) and t.get_text()]


def test_figure_2_shows_r_untested_and_its_labels_do_not_overlap(release_analysis) -> None:
    fig = figure_2(release_analysis)
    try:
        ax = fig.axes[0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        r_lines = [t.get_text() for t in ax.texts if not isinstance(t, Annotation)]
        assert any("4 models: too few to test" in t for t in r_lines), r_lines
        assert not any("[" in t for t in r_lines)  # no interval beside an untested r
        labels = _labels(fig)
        models = release_analysis.summary.query("set == 'accepted'")["model"].nunique()
        assert len(labels) >= models - 1  # every point numbered (points at one spot share a label)
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert not [(a.get_text(), b.get_text()) for (a, x), (b, y) in
                    combinations(zip(labels, boxes, strict=True), 2) if x.overlaps(y)]  # fmt: skip
        frame = ax.get_window_extent(renderer)
        assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 for b in boxes)  # inside the axes
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "longest" in legend and "most-words" in legend  # the key names each numbered point
    finally:
        plt.close(fig)


def test_figure_2_gives_r_its_interval_from_six_models(predictions) -> None:
    """Only the gate model left out: 6 models, so r is tested and its interval shown."""
    a = analyze(predictions, gate=read_gate(RELEASE / "results/gate/gate.json"))
    assert set(a.correlation["n_models"]) == {MIN_MODELS_TESTED}
    fig = figure_2(a)
    try:
        r_lines = [t.get_text() for t in fig.axes[0].texts if not isinstance(t, Annotation)]
        assert any("[" in t and "6 models)" in t for t in r_lines)
        assert not any("too few" in t for t in r_lines)
    finally:
        plt.close(fig)
    assert "r [95% CI]" in correlation_table(a).shown.columns
