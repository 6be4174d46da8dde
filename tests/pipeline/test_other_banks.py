"""The pipeline on a 10-option bank (real LEXam items) and under Matched-and-Dashed, from the real configs."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_pipeline import STAGES, compose_params, run_stage  # same folder (pytest's rootdir import mode)

from blindmcq.config.schema import validate_group
from blindmcq.datasets.items import read_items


def ten_option_bank(data: Path, path: Path, n: int = 12) -> None:
    """Real LEXam 16-option items cut to their first 10 options (items whose key is among them)."""
    from blindmcq.datasets.registry import load_dataset

    lexam = {"loader": "lexam", "path": data / "lexam/MCQs_test_perturbation.xlsx", "n_options": 16}
    source = load_dataset(validate_group("dataset", lexam))
    rows = [
        {"id": item.number, "question": item.question, "options": list(item.options[:10]), "key": item.key}
        for item in source
        if item.usable and item.key < 10
    ][:n]
    assert len(rows) == n
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def run_project(work: Path, repo_root: Path, overrides: list[str]) -> dict:
    for sub in ("conf", "defaults"):
        shutil.copytree(repo_root / sub, work / sub)
    params = compose_params(
        work,
        [
            "model=longest", "model@gate_model=longest", "panel=none", f"probe.cache={work}/cache.sqlite",
            f"tracking.uri=sqlite:///{work}/mlruns/mlflow.db",
            f"tracking.artifact_location={work}/mlruns/art",
            *overrides,
        ],
    )  # fmt: skip
    (work / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    old = Path.cwd()
    os.chdir(work)
    try:
        for stage in STAGES:
            run_stage(stage)
    finally:
        os.chdir(old)
    return params


@pytest.mark.full  # the pipeline end to end on another bank
def test_a_ten_option_bank_runs_end_to_end(tmp_path: Path, repo_root: Path, samples: Path) -> None:
    bank = tmp_path / "lexam10.jsonl"
    ten_option_bank(samples, bank)
    run_project(
        tmp_path / "p",
        repo_root,
        [
            "dataset=generic-example", f"dataset.path={bank}", f"dataset.dep={bank}", "dataset.format=jsonl",
            "dataset.source=lexam", "dataset.bank=p16cut10", "~dataset.option_columns",
            "+dataset.options=options",
            "dataset.key=key", "dataset.key_format=index", "dataset.id=id", "probe.sample=null",
            "intervention.answerpool.sample=10", "intervention.answerpool.group_size=2",
            "analysis.second_bank.name=again",
            f"analysis.second_bank.predictions={tmp_path}/p/results/predictions/predictions.parquet",
        ],
    )  # fmt: skip
    work = tmp_path / "p"
    items = read_items(work / "results/corpus/items.jsonl")
    assert len(items) == 12 and {i.n_options for i in items} == {10}
    predictions = pd.read_parquet(work / "results/predictions/predictions.parquet")
    blind = predictions[(predictions.condition == "blind") & predictions.forced_slot.isna()]
    assert set(blind.order_id) == {f"rot{k}" for k in range(10)} | {f"rev{k}" for k in range(10)}
    assert blind.groupby("item_id").size().eq(20).all()  # 2N orders
    forced = predictions[predictions.forced_slot.notna()]
    assert sorted(forced.forced_slot.unique()) == list(range(10))
    gate = json.loads((work / "results/gate/gate.json").read_text())
    assert gate["orders"] == sorted({f"rot{k}" for k in range(10)} | {f"rev{k}" for k in range(10)})
    table2 = (work / "reports/tables/table2.md").read_text(encoding="utf-8")
    assert "constant_9" in table2 and "0.100" in table2  # chance 1/N with N = 10
    table10 = (work / "reports/tables/table10.md").read_text(encoding="utf-8")
    assert "| longest | blind | 12 |" in table10  # the second bank's parsed answers, n = 12 items


@pytest.mark.slow
def test_matched_and_dashed_run_lands_beside_select_and_letter(tmp_path: Path, repo_root: Path) -> None:
    params = run_project(tmp_path / "md", repo_root, ["protocol=md", "probe.sample=6", "condition=blind"])
    assert params["protocol"]["name"] == "md"
    predictions = pd.read_parquet(tmp_path / "md/results/predictions/predictions.parquet")
    assert set(predictions.protocol) == {"md"} and set(predictions.labels) == {"dash"}
    # the heuristic answers with the option text itself, which the matcher maps back exactly
    assert (predictions.parse_status == "ok").all()
    assert predictions.picked_slot.notna().all()
    import mlflow

    mlflow.set_tracking_uri(params["tracking"]["uri"])
    runs = mlflow.search_runs(experiment_names=["blindmcq"], output_format="list")
    assert any(r.data.params.get("protocol.name") == "md" for r in runs)


@pytest.mark.full  # the pipeline end to end on another bank
def test_lexam_32_runs_end_to_end_and_says_why_lexical_is_absent(tmp_path: Path, repo_root: Path) -> None:
    """``-S dataset=lexam-32`` on 12 real rows (tests/fixtures/audit): 32 options labelled A..Z, AA..AF,
    and, the bank being German (Latin script) against Ukrainian statutes, no lexical row in Table 2 or
    the panel, with the reason in Table 2's note and in the findings."""
    fixture = repo_root / "tests/fixtures/audit/lexam_perturbation_12.xlsx"
    run_project(
        tmp_path / "p",
        repo_root,
        [
            "dataset=lexam-32", f"dataset.path={fixture}", f"dataset.dep={fixture}", "panel=surface",
            "probe.sample=3", "intervention.answerpool.sample=3", "intervention.answerpool.group_size=2",
        ],
    )  # fmt: skip
    work = tmp_path / "p"
    predictions = pd.read_parquet(work / "results/predictions/predictions.parquet")
    assert set(predictions.n_options) == {32} and "lexical" not in set(predictions.model)
    assert predictions.picked_slot.max() >= 26 and (predictions.parse_status == "ok").all()
    facts = json.loads((work / "results/baselines/facts.json").read_text(encoding="utf-8"))
    assert "'latin'" in facts["lexical"]["absent"]
    picks = pd.read_parquet(work / "results/baselines/picks.parquet")
    assert "lexical_search" not in set(picks.strategy)
    table2 = (work / "reports/tables/table2.md").read_text(encoding="utf-8")
    findings = (work / "results/analysis/findings.md").read_text(encoding="utf-8")
    for text in (table2, findings):
        assert "No lexical row" in text or "no lexical row" in text
        assert "Lexical search skipped: the statutes are in 'uk', the bank is 'latin'" in text
    manifest = json.loads((work / "results/predictions/models.json").read_text(encoding="utf-8"))
    assert list(manifest["absent"]) == ["lexical"]
    report = (work / "reports/report.md").read_text(encoding="utf-8")
    # slots past Z named by the bank's labels, each with its count before its share: "slot 27 (AA) 0 (0.000)"
    for slot in ("slot 26 (Z) ", "slot 27 (AA) ", "slot 32 (AF) "):
        assert re.search(re.escape(slot) + r"\d+ \(0\.\d{3}\)", report), slot
