"""Comparable runs: the run's own model logs model-free metric names, the model is a param, and run
names carry what differs between runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindmcq.reporting.tracking import comparable_metrics, log_run
from blindmcq.wiring import run_name

METRICS = {
    "blind_acc/gemma3-270m/all": 0.317,
    "blind_acc/gemma3-270m/accepted": 0.3,
    "excess/gemma3-270m/accepted": 0.0,
    "habit/gemma3-270m/all": 0.317,
    "agreement/gemma3-270m": 1.0,
    "blind_acc/longest/all": 0.324,  # another model (a panel member, a separate gate model)
    "table2/longest": 0.324,
    "gate/n_accepted": 60.0,
}


def test_own_model_metrics_lose_the_model_name() -> None:
    out = comparable_metrics(METRICS, "gemma3-270m")
    assert out["blind_acc/all"] == 0.317 and out["blind_acc/accepted"] == 0.3
    assert out["excess/accepted"] == 0.0 and out["habit/all"] == 0.317 and out["agreement"] == 1.0
    assert out["panel/longest/blind_acc/all"] == 0.324 and out["table2/longest"] == 0.324
    assert not any("gemma3-270m" in key for key in out)
    assert len(out) == len(METRICS)  # renamed, nothing dropped or merged
    assert comparable_metrics(out, "gemma3-270m") == out  # already comparable names pass unchanged
    other = comparable_metrics(METRICS, "longest")
    assert other["blind_acc/all"] == 0.324 and other["panel/gemma3-270m/blind_acc/all"] == 0.317
    assert other["panel/gemma3-270m/agreement"] == 1.0


def test_the_analysis_writes_the_names_tracking_logs() -> None:
    """reports/metrics.json (analysis.tables.headline_metrics with the probed model) and
    comparable_metrics on the plain names agree key for key."""
    from blindmcq.analysis.tables import metric_key

    for plain in METRICS:
        parts = plain.split("/")
        if parts[0] in ("blind_acc", "excess", "habit"):
            assert metric_key(*parts, own="gemma3-270m") in comparable_metrics({plain: 0.0}, "gemma3-270m")


def test_model_ids_are_matched_as_the_analysis_spells_them() -> None:
    out = comparable_metrics({"full_acc/us.deepseek.r1-v1_0/all": 0.5}, "us.deepseek.r1-v1:0")
    assert out == {"full_acc/all": 0.5}


def params(**over: object) -> dict:
    base = {
        "model": {"name": "gemma3-270m"},
        "gate_model": {"name": "gemma3-270m"},
        "dataset": {"name": "customs-default"},
        "prompt": {"name": "original"},
        "labels": {"name": "latin"},
        "protocol": {"name": "sl"},
        "reasoning": {"name": "direct"},
        "condition": {"name": "default"},
        "probe": {"sample": 60, "seed": 0},
    }
    return {**base, **over}


def test_run_names_differ_where_the_runs_differ() -> None:
    names = {
        run_name(params()),
        run_name(params(probe={"sample": 120, "seed": 0})),
        run_name(params(probe={"sample": 60, "seed": 1})),
        run_name(params(gate_model={"name": "longest"})),
        run_name(params(model={"name": "gemma3-270m", "scoring": "cloze"})),
        run_name(params(reasoning={"name": "step_by_step"})),
    }
    assert len(names) == 6
    assert run_name(params()) == "gemma3-270m/customs-default/original/latin/sl/direct/default/n=60,seed=0"


@pytest.mark.slow
def test_logged_runs_of_two_models_share_metric_columns(tmp_path: Path) -> None:
    import mlflow

    tracking = {
        "uri": f"sqlite:///{tmp_path / 'mlflow.db'}",
        "artifact_location": str(tmp_path / "artifacts"),
        "experiment": "names",
    }
    for model in ("gemma3-270m", "longest"):
        metrics = {f"blind_acc/{model}/all": 0.25, f"excess/{model}/accepted": 0.0}
        log_run(tracking, run_name=model, config={"model": {"name": model}}, metrics=metrics, model=model)
    runs = mlflow.search_runs(experiment_names=["names"], output_format="pandas")
    assert sorted(runs["params.model"]) == ["gemma3-270m", "longest"]
    assert runs["metrics.blind_acc/all"].notna().all() and runs["metrics.excess/accepted"].notna().all()
