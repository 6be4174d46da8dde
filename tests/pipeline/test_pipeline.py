"""The whole pipeline on the real default bank, composed from the real configs, with a fast heuristic model.

Runs every stage entry point in order in a scratch copy of the project (so nothing here touches the
working tree), then checks the report against a hand count on the bank and against MLflow.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from blindmcq.datasets.items import read_items
from blindmcq.errors import InputError
from blindmcq.params import load_params

STAGES = ("corpus", "statutes", "baselines", "probe", "gate", "analyze", "rewrite", "answerpool", "report")


def compose_params(root: Path, overrides: list[str]) -> dict:
    with initialize_config_dir(config_dir=str(root / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    return OmegaConf.to_container(cfg, resolve=True)


def run_stage(name: str) -> None:
    import importlib

    importlib.import_module(f"blindmcq.stages.{name}").main()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, repo_root: Path):
    work = tmp_path_factory.mktemp("project")
    for sub in ("conf", "defaults"):
        shutil.copytree(repo_root / sub, work / sub)
    params = compose_params(
        work,
        [
            "model=longest",
            "model@gate_model=longest",
            "panel=surface",  # longest (the probed model, probed once), most-words, lexical
            "probe.sample=40",
            f"probe.cache={work}/cache.sqlite",
            f"tracking.uri=sqlite:///{work}/mlruns/mlflow.db",
            f"tracking.artifact_location={work}/mlruns/artifacts",
        ],
    )
    (work / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    old = Path.cwd()
    os.chdir(work)
    from blindmcq.backends import registry

    make = registry.Entry.make

    def recording(self: registry.Entry, model_cfg: dict) -> object:  # every backend any stage builds
        BUILT.append(self.name)
        return make(self, model_cfg)

    registry.Entry.make = recording  # type: ignore[method-assign]
    try:
        for stage in STAGES:
            run_stage(stage)
        yield work, params
    finally:
        registry.Entry.make = make  # type: ignore[method-assign]
        os.chdir(old)


BUILT: list[str] = []


def test_a_model_free_run_builds_no_model_backend(project):
    """The README's model-free configuration (heuristic models, panel=surface) builds only heuristic and
    lexical-search backends in every stage: no local model is loaded, no Bedrock client made."""
    assert BUILT and set(BUILT) <= {"heuristic", "lexical"}, BUILT


def test_corpus_is_the_real_bank_with_stable_ids(project):
    work, _ = project
    items = read_items(work / "results/corpus/items.jsonl")
    assert len(items) == 340
    assert len({i.id for i in items}) == 340
    assert all(i.id.startswith("dmsu-") and i.usable for i in items)


def test_table2_matches_a_hand_count_on_the_source_bank(project, shared_data: Path):
    work, _ = project
    bank = json.loads((shared_data / "ua-customs-exam/questions.json").read_text(encoding="utf-8"))
    questions = [q for act in bank["legislation"].values() for q in act]
    keys = [q["correct_index"] for q in questions]
    lengths = [[len(a["text"]) for a in q["answers"]] for q in questions]
    # a tie of k options earns 1/k when it holds the key (Table 2 credits the expectation of a random break)
    longest_right = sum((ls[k] == max(ls)) / ls.count(max(ls)) for ls, k in zip(lengths, keys, strict=True))
    metrics = json.loads((work / "reports/metrics.json").read_text())
    assert metrics["table2/constant_0"] == round(keys.count(0) / len(keys), 3)
    assert metrics["table2/constant_3"] == round(keys.count(3) / len(keys), 3)
    # the source's own text lengths; the PDF round trip must not change which option is longest
    assert metrics["table2/longest"] == round(longest_right / len(keys), 3)


def test_report_has_every_table_and_figure(project):
    work, _ = project
    report = (work / "reports/report.md").read_text(encoding="utf-8")
    for n in range(2, 11):
        assert (work / f"reports/tables/table{n}.md").exists()
    for n in range(1, 5):
        png = work / f"reports/figures/figure{n}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"figures/figure{n}.png" in report
    assert "lexical_search" in (work / "reports/tables/table2.md").read_text(encoding="utf-8")
    assert "## Interventions" in report
    html = (work / "reports/html/index.html").read_text(encoding="utf-8")
    assert "dmsu-constitution-1" in html  # the item explorer embeds the bank


def test_the_heuristic_model_earns_its_habit_and_no_excess(project):
    """`longest` always answers by length, so on a blind order its picks follow the options, and the
    gate (same model) rejects every item it gets right on all 8 orders."""
    work, _ = project
    metrics = json.loads((work / "reports/metrics.json").read_text())
    gate = json.loads((work / "results/gate/gate.json").read_text())
    counts = dict(zip(gate["counts"]["item_id"], gate["counts"]["solved"], strict=True))
    items = {i.id: i for i in read_items(work / "results/corpus/items.jsonl")}
    for item_id, solved in counts.items():
        lengths = [len(o) for o in items[item_id].options]
        if lengths.count(max(lengths)) == 1:  # a unique longest option: right on all orders or none
            assert solved == (8 if lengths.index(max(lengths)) == items[item_id].key else 0), item_id
    assert sorted(gate["rejected"]) == sorted(i for i, c in counts.items() if c >= 5)
    # a rejected item's key is its longest option, alone or in a tie (broken at random per order)
    for item_id in gate["rejected"]:
        lengths = [len(o) for o in items[item_id].options]
        assert lengths[items[item_id].key] == max(lengths), item_id
    untied = [
        i
        for i in gate["rejected"]
        if [len(o) for o in items[i].options].count(max(map(len, items[i].options))) == 1
    ]
    share = len(untied) / len(gate["rejected"])
    assert round(share, 3) <= metrics["blind_acc/rejected"] <= 1.0  # no model name: the probed model's


def test_the_panel_is_probed_on_the_same_items_and_lexical_equals_table2(project):
    """Panel members answer the same presentations; the lexical model's blind accuracy on the probed
    items is Table 2's lexical pick on those items (position-free: the same over every order)."""
    import pandas as pd

    work, _ = project
    predictions = pd.read_parquet(work / "results/predictions/predictions.parquet")
    assert set(predictions["model"]) == {"longest", "most-words", "lexical"}
    per_model = predictions.groupby("model")["item_id"].nunique()
    assert (per_model == 40).all()
    picks = pd.read_parquet(work / "results/baselines/picks.parquet")
    lexical = predictions[(predictions["model"] == "lexical") & (predictions["condition"] == "blind")]
    table2 = picks[(picks["strategy"] == "lexical_search") & picks["item_id"].isin(lexical["item_id"])]
    assert lexical.groupby("item_id")["picked_option"].nunique().max() == 1
    expected = table2.set_index("item_id")["picked_option"].astype(int)
    assert lexical.groupby("item_id")["picked_option"].first().astype(int).to_dict() == expected.to_dict()
    metrics = json.loads((work / "reports/metrics.json").read_text())
    assert metrics["panel/lexical/blind_acc/all"] == round(float(table2["correct"].mean()), 3)
    report = (work / "reports/report.md").read_text(encoding="utf-8")
    assert "## What this run shows" in report and "The gate, built on longest" in report
    assert "No data" not in (work / "reports/tables/table5.md").read_text(encoding="utf-8")
    models = json.loads((work / "results/predictions/models.json").read_text())
    assert models["model"] == "longest" and "lexical" in models["models"]


def test_mlflow_run_has_the_report_metrics(project):
    import mlflow

    work, params = project
    mlflow.set_tracking_uri(params["tracking"]["uri"])
    runs = mlflow.search_runs(experiment_names=[params["tracking"]["experiment"]], output_format="list")
    (run,) = [r for r in runs if r.data.tags.get("stage") == "report"]
    logged = run.data.metrics
    metrics = json.loads((work / "reports/metrics.json").read_text())
    from blindmcq.reporting.tracking import comparable_metrics  # MLflow names leave the run's own model out

    assert logged == pytest.approx(comparable_metrics(metrics, "longest"))
    assert "blind_acc/all" in logged and run.data.params["model.name"] == "longest"


def test_probe_rerun_makes_no_new_call(project):
    """A rerun from the response cache asks no model and rewrites the predictions byte for byte (the
    whole pipeline by `dvc repro -f`, dvc.lock unchanged: tests/pipeline/test_rerun.py, full suite)."""
    work, _ = project
    before = {p: p.read_bytes() for p in sorted((work / "results/predictions").rglob("*")) if p.is_file()}
    run_stage("probe")
    calls = json.loads((work / "results/calls/predictions/calls.json").read_text())
    assert calls["new_calls"] == 0
    assert calls["from_cache"] == calls["calls"] > 0
    after = {p: p.read_bytes() for p in sorted((work / "results/predictions").rglob("*")) if p.is_file()}
    assert before and after == before


def test_missing_items_file_names_it(tmp_path: Path, repo_root: Path):
    from blindmcq.stages.baselines import build_baselines

    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(InputError, match=r"items\.jsonl"):
            build_baselines(load_params(repo_root / "params.yaml"))
    finally:
        os.chdir(old)
    assert not (tmp_path / "results/baselines").exists()


@pytest.mark.parametrize(
    ("override", "named"),
    [("prompt=no_such_phrasing", "prompt"), ("probe.sampel=3", "sampel"), ("model=gpt-9", "model")],
)
def test_unknown_config_key_or_option_is_named(repo_root: Path, override: str, named: str) -> None:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    with pytest.raises((HydraException, OmegaConfBaseException), match=named):
        compose_params(repo_root, [override])


def test_missing_params_key_is_named(tmp_path: Path) -> None:
    from blindmcq.errors import ConfigError
    from blindmcq.params import require

    with pytest.raises(ConfigError, match=r"'probe\.cache'"):
        require({"probe": {"sample": 3}}, "probe.cache")


def test_committed_params_yaml_is_the_composed_default(repo_root: Path) -> None:
    """params.yaml is what `dvc repro` reads: it must equal conf/ composed (scripts/compose_params.py)."""
    committed = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    assert committed == compose_params(repo_root, []), "run: python scripts/compose_params.py"


def test_the_html_report_opens_with_the_conclusions_of_report_md(project):
    import html
    import re

    work, _ = project
    report = (work / "reports/report.md").read_text(encoding="utf-8")
    section = report.split("## What this run shows\n", 1)[1].split("\n## ", 1)[0].strip()
    page = (work / "reports/html/index.html").read_text(encoding="utf-8")
    opening = page[page.index("<main>") : page.index('id="tables"')]
    assert "<h2>What this run shows</h2>" in opening
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", opening)).split())
    findings = (work / "results/analysis/findings.md").read_text(encoding="utf-8").strip()
    assert section.startswith(findings)  # report.md opens with the findings (then the run's settings)
    for paragraph in findings.split("\n\n"):
        words = " ".join(paragraph.replace("`", "").replace("**", "").split())
        assert words in text, words[:80]
