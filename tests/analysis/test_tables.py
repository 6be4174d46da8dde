import re

import pandas as pd
import pytest
from simulate import frame, make_row

from blindmcq.analysis import analyze, build_tables, gate, headline_metrics, write_tables
from blindmcq.analysis import tables as t
from blindmcq.errors import InputError

CELL = re.compile(r"^(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]$")


@pytest.fixture(scope="module")
def built(analysis, items):
    # the shape blindmcq.auditing.surface writes: one row per strategy and item
    base = pd.DataFrame(
        [
            {
                "strategy": name,
                "item_id": it.id,
                "n_options": 4,
                "picked_option": slot,
                "correct": it.key == slot,
            }
            for name, slot in (("longest", 0), ("constant_0", 0), ("constant_1", 1))
            for it in items
        ]
    )
    return build_tables(analysis, baselines=base, items=items)


def test_interval_format_writes_bounds_like_the_value():
    assert t.fmt_ci(0.515, 0.50413, 0.5257) == "0.515 [0.504, 0.526]"
    assert t.fmt_ci(0.017, -0.0191, 0.0524, signed=True) == "+0.017 [-0.019, +0.052]"
    assert t.fmt_ci(0.2, float("nan"), 0.3) == "0.200"
    assert t.fmt(0.0811, signed=True) == "+0.081" and t.fmt(float("nan")) == "—"
    assert t.fmt_p(0.0004) == "<.001"


def test_table3_cells_equal_headline_metrics(analysis, built):
    metrics = headline_metrics(analysis)
    shown = built["table3"].shown
    assert len(shown) == 5
    assert "Err/Ref/Trunc blind, all" in shown.columns
    assert [c for c in shown.columns if c.startswith("Blind, ")] == [
        "Blind, all",
        "Blind, accepted",
        "Blind, rejected",
    ]
    for _, row in shown.iterrows():
        model = row["Model"].removesuffix(" (gate)")
        for st in ("all", "accepted", "rejected"):
            value, lo, hi = CELL.match(row[f"Blind, {st}"]).groups()
            assert float(value) == metrics[f"blind_acc/{model}/{st}"]
            assert float(lo) == metrics[f"blind_lo/{model}/{st}"]
            assert float(hi) == metrics[f"blind_hi/{model}/{st}"]
        assert float(CELL.match(row["Full, accepted"]).group(1)) == metrics[f"full_acc/{model}/accepted"]
        assert row["Err/Ref/Trunc blind, all"] == "0/0/0"  # the simulator has no failed calls


def test_table4_cells_equal_headline_metrics(analysis, built):
    metrics = headline_metrics(analysis)
    shown = built["table4"].shown
    assert list(dict.fromkeys(shown["Set"])) == ["all", "accepted"]  # every item first, then the gate's
    for _, row in shown.iterrows():
        model, st = row["Model"].removesuffix(" (gate)"), row["Set"]
        assert float(row["Habit"]) == metrics[f"habit/{model}/{st}"]
        assert float(row["Excess"]) == metrics[f"excess/{model}/{st}"]
        assert float(row["Blind"]) == metrics[f"blind_acc/{model}/{st}"]
    assert set(shown.loc[shown["Model"] == "first", "Excess"]) == {"+0.000"}


def test_table8_and_table5_match_metrics(analysis, built):
    metrics = headline_metrics(analysis)
    for _, row in built["table8"].shown.iterrows():
        model = row["Model"].removesuffix(" (gate)")
        assert float(row["Position-free"].split()[0]) == metrics[f"position_free/{model}/sample200"]
    for _, row in built["table5"].shown.iterrows():
        assert float(row["Gap [95% CI]"].split()[0]) == metrics[f"gap/{row['Model']}"]
        assert float(row["Expected, independent given the key's slot"]) == metrics[f"expected/{row['Model']}"]
    assert "measured on all gated items" in built["table5"].note
    assert metrics["gate/n_accepted"] + metrics["gate/n_rejected"] == 600


def test_table2_from_baselines(built, items):
    frame2 = built["table2"].frame.set_index("strategy")
    assert frame2.loc["Chance", "acc"] == 0.25
    assert frame2.loc["longest", "acc"] == pytest.approx(sum(it.key == 0 for it in items) / len(items))
    assert list(frame2.index) == ["Chance", "longest", "constant_0", "constant_1"]  # order as given
    assert "Best constant position: constant_0" in built["table2"].note
    with pytest.raises(InputError, match="picked_option"):
        t.table_2(pd.DataFrame({"strategy": ["x"], "item_id": ["a"], "correct": [True]}))


def test_bank_profile_matches_published_customs_facts(full_bank):
    bank = full_bank
    prof = t.bank_profile(bank).frame.set_index("measure")["value"]
    assert round(prof["key in slot A"] * 2950) == 1079
    assert (
        round(prof["mean key length (chars)"]) == 73 and round(prof["mean distractor length (chars)"]) == 55
    )


def test_tables_without_data_say_what_they_need(tmp_path):
    rows = [make_row(item_id=f"i{i}", picked_slot=i % 4, picked_option=i % 4) for i in range(8)]
    a = analyze(frame(rows))
    built = build_tables(a)
    for name in ("table2", "table5", "table8", "table10", "gate", "correlation"):
        assert "No data: this table needs" in built[name].note, name
    assert "forced-placement" in built["table8"].note
    assert "one value present" in built["table6"].note
    paths = write_tables(tmp_path, built)
    assert "forced-placement" in paths["table8.md"].read_text()
    assert "Table 8" in paths["tables.md"].read_text()
    assert not list(tmp_path.glob(".*.tmp"))


def test_write_tables_writes_every_table(tmp_path, built):
    paths = write_tables(tmp_path / "report", built)
    for name in built:
        assert paths[f"{name}.md"].exists() and paths[f"{name}.csv"].exists()
    csv = pd.read_csv(paths["table4.csv"])
    assert {"habit", "excess", "pick_0", "key_3"} <= set(csv.columns)
    md = paths["table3.md"].read_text()
    assert md.startswith("### Table 3") and "| Model |" in md


def test_table5_without_other_models_says_why(predictions):
    only_gate = predictions[predictions["model"] == "gate"]
    a = analyze(only_gate, gate=gate(only_gate, gate_model="gate"))
    table = build_tables(a)["table5"]
    assert table.shown.empty and "only the gate model (gate)" in table.note
    assert "only the gate model" in table.markdown()


def test_the_probed_model_has_model_free_metric_names_and_the_panel_its_own(analysis):
    plain = headline_metrics(analysis)
    named = headline_metrics(analysis, model="first")
    assert named["blind_acc/all"] == plain["blind_acc/first/all"]
    assert named["excess/accepted"] == plain["excess/first/accepted"]
    assert named["panel/gate/blind_acc/all"] == plain["blind_acc/gate/all"]
    assert named["agreement"] == plain["agreement/first"]
    assert len(named) == len(plain) and not any(k.startswith("blind_acc/first") for k in named)


def test_metric_names_are_mlflow_safe():
    assert t.metric_name("blind_acc", "us.deepseek.r1-v1:0", "all") == "blind_acc/us.deepseek.r1-v1_0/all"


def test_the_registry_is_the_one_list_of_tables_titles_and_needs(built):
    """``build_tables``, ``TITLES`` and ``NEEDS`` come from ``TABLES``, in its (the report's) order."""
    assert list(built) == [spec.key for spec in t.TABLES]
    assert all(built[key].title.startswith(t.TITLES[key]) for key in built)
    assert set(t.NEEDS) <= set(t.TITLES) and [spec.key for spec in t.TABLES] == list(t.TITLES)
    rows = [make_row(item_id=f"i{i}", picked_slot=i % 4, picked_option=i % 4) for i in range(8)]
    sparse = build_tables(analyze(frame(rows)))
    assert "bank_profile" not in sparse  # built only with the bank's items
    for name in ("table2", "table5", "table8", "table10", "gate", "correlation"):
        assert sparse[name].note == f"No data: this table needs {t.NEEDS[name]}.", name


def test_every_per_model_kind_of_the_registry_lands_in_metrics_json(analysis):
    """Each per-model kind a table contributes is a column the analysis computes and a metric name
    ``headline_metrics`` writes (reports/metrics.json), for the probed model and for the panel."""
    named = headline_metrics(analysis, model="first")
    for spec in t.TABLES:
        for kind in spec.set_kinds:
            assert kind in analysis.summary, (spec.key, kind)
            assert f"{kind}/all" in named and f"panel/gate/{kind}/all" in named, (spec.key, kind)
        for kind in spec.detail_kinds:
            assert kind in analysis.forced, (spec.key, kind)
            assert f"{kind}/{analysis.detail_set}" in named, (spec.key, kind)
        for kind in spec.pair_kinds:
            assert kind in analysis.agreement, (spec.key, kind)
            assert kind in named, (spec.key, kind)
        if spec.metrics is not None:
            assert spec.metrics(analysis).items() <= named.items(), spec.key
    kinds = [k for spec in t.TABLES for k in spec.kinds]
    assert len(kinds) == len(set(kinds)), "a kind belongs to one table"


def test_tables_json_holds_what_the_markdown_shows(tmp_path, built):
    """``tables.json`` (the HTML report's tables) carries each table's title, header, rows and notes
    exactly as ``tables.md`` writes them."""
    import json

    paths = write_tables(tmp_path, built)
    cells = json.loads(paths["tables.json"].read_text(encoding="utf-8"))
    assert [c["name"] for c in cells] == list(built)
    markdown = paths["tables.md"].read_text(encoding="utf-8")
    for c in cells:
        table = built[c["name"]]
        assert f"### {c['title']}" in markdown
        if c["columns"]:
            assert "| " + " | ".join(c["columns"]) + " |" in table.markdown().replace("  |", " |")
            assert len(c["rows"]) == len(table.shown) and all(len(r) == len(c["columns"]) for r in c["rows"])
        assert c["notes"] == ([table.note] if table.note else [])
    surface = next(c for c in cells if c["name"] == "surface_gate")
    if surface["columns"]:  # the second "vs chance " column, told apart by a trailing space, shows trimmed
        assert surface["columns"].count("vs chance") == 2
