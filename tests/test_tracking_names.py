"""Comparable runs: the run's own model logs model-free metric names, the model is a param, and run
names carry what differs between runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindmcq.reporting.tracking import comparable_metrics, log_run
from blindmcq.sweep import run_name

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


def test_metrics_are_named_by_role() -> None:
    from blindmcq.reporting.tracking import role_metrics

    metrics = {"blind_acc/constant-a/all": 0.25, "blind_acc/longest/all": 0.3, "blind_acc/lexical/all": 0.4}
    # a sweep child: longest gates and is no panel member -> gate_model/ only
    alone = role_metrics(metrics, "constant-a", gate_model="longest", panel=())
    assert alone == {
        "blind_acc/all": 0.25,
        "gate_model/blind_acc/all": 0.3,
        "panel/lexical/blind_acc/all": 0.4,
    }
    # the default pipeline: lexical gates and is a panel member -> both names
    both = role_metrics(metrics, "constant-a", gate_model="lexical", panel=["longest", "lexical"])
    assert both["gate_model/blind_acc/all"] == 0.4 and both["panel/lexical/blind_acc/all"] == 0.4
    assert both["panel/longest/blind_acc/all"] == 0.3
    # the gate model is the probed model: no gate_model/ copy
    assert role_metrics(metrics, "longest", gate_model="longest", panel=()) == comparable_metrics(
        metrics, "longest"
    )


@pytest.mark.slow
def test_a_pipeline_run_is_one_parent_with_its_stages_as_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each stage that logs (rewrite, answerpool, report) becomes a child of one parent per pipeline run,
    tagged with the DVC experiment name, the git revision and the params.yaml hash."""
    import hashlib
    import subprocess

    import mlflow

    from blindmcq.reporting.tracking import stage_parent
    from blindmcq.stages._tracking import stage_run_name

    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
                    "-m", "x"], check=True)  # fmt: skip
    rev = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    (tmp_path / "params.yaml").write_text("model:\n  name: longest\n")
    digest = hashlib.sha256((tmp_path / "params.yaml").read_bytes()).hexdigest()
    tracking = {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "artifact_location": str(tmp_path / "a"),
                "experiment": "pipe"}  # fmt: skip
    config = {"model": {"name": "longest"}, "gate_model": {"name": "most-words"}, "panel": {"models": []},
              "dataset": {"name": "zno-geo"}}  # fmt: skip
    monkeypatch.delenv("BLINDMCQ_SWEEP_ID", raising=False)
    monkeypatch.delenv("DVC_EXP_BASELINE_REV", raising=False)
    for exp in ("exp-one", "exp-two"):
        monkeypatch.setenv("DVC_EXP_NAME", exp)
        for stage in ("rewrite", "answerpool", "report"):
            metrics = {"blind_acc/longest/all": 0.3, "blind_acc/most-words/all": 0.2}
            log_run(tracking, run_name=stage_run_name(stage, config), config=config, metrics=metrics,
                    tags={"stage": stage}, model="longest", gate_model="most-words", panel=(),
                    parent=stage_parent(config), parent_metrics={"blind": 0.3})  # fmt: skip
    runs = mlflow.search_runs(experiment_names=["pipe"], output_format="list")
    parents = {r.data.tags["dvc.exp_name"]: r for r in runs if r.data.tags.get("role") == "parent"}
    assert sorted(parents) == ["exp-one", "exp-two"]
    for exp, parent in parents.items():
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert sorted(c.data.tags["stage"] for c in children) == ["answerpool", "report", "rewrite"]
        assert sorted(c.info.run_name for c in children) == [f"{s}·{exp}·zno-geo·longest" for s in
                                                             ("answerpool", "report", "rewrite")]  # fmt: skip
        assert all(c.data.tags["dvc.exp_name"] == exp for c in children)
        assert parent.data.tags["git.revision"] == rev and parent.data.tags["params_yaml.sha256"] == digest
        assert parent.data.params["model.name"] == "longest" and parent.data.metrics["blind"] == 0.3
        assert exp in parent.info.run_name and rev[:7] in parent.info.run_name
        assert parent.info.run_name.startswith(f"exp {exp} on zno-geo ")  # the bank, in every run name
        # the gate model of a longest run is named by its role, not as a panel member
        assert all(c.data.metrics["gate_model/blind_acc/all"] == 0.2 for c in children)
        assert not any(k.startswith("panel/") for c in children for k in c.data.metrics)


def test_every_per_model_metric_the_run_writes_is_renamed_by_role() -> None:
    """The committed ``reports/metrics.json`` (the probed model's names lose the model; the others go
    under ``panel/``): each of its per-model kinds is one the table registry (``analysis.tables.TABLES``)
    lists, so a new statistic cannot be written and then tracked under a model-specific name."""
    import json

    from blindmcq.analysis.tables import PAIR_KINDS, PER_MODEL_KINDS

    metrics = json.loads((Path(__file__).resolve().parents[1] / "reports" / "metrics.json").read_text())
    panel = {key.split("/")[1] for key in metrics if key.startswith("panel/")}
    assert panel, "the default run has a panel"
    for key in metrics:
        parts = key.split("/")
        if key.startswith("panel/"):
            assert parts[2] in PER_MODEL_KINDS + PAIR_KINDS, key
        elif parts[0] in PER_MODEL_KINDS + PAIR_KINDS:
            assert not set(parts) & panel, f"{key}: the probed model's metric names no model"
    model = next(iter(sorted(panel)))
    plain = {f"{kind}/{model}/all": 0.5 for kind in PER_MODEL_KINDS} | {
        f"{k}/{model}": 0.5 for k in PAIR_KINDS
    }
    assert all(model not in key for key in comparable_metrics(plain, model))


def test_the_rewrites_per_model_figures_are_named_by_role_too() -> None:
    """The rewrite stage writes ``<model>/<kind>`` for every panel member it rotates through: in MLflow the
    probed model's lose the name, the others go under ``panel/`` and the gate model under ``gate_model/``,
    as the report's do; figures that name no model pass unchanged."""
    from blindmcq.reporting.tracking import role_metrics

    rewrite = {
        "items": 30.0,
        "gemma3-270m/blind_before_acc": 0.3,
        "longest/blind_before_acc": 0.35,
        "lexical/blind_after_acc": 0.2,
    }
    named = role_metrics(rewrite, "gemma3-270m", gate_model="lexical", panel=["longest", "lexical"])
    assert named == {
        "items": 30.0,
        "blind_before_acc": 0.3,
        "panel/longest/blind_before_acc": 0.35,
        "panel/lexical/blind_after_acc": 0.2,
        "gate_model/blind_after_acc": 0.2,
    }


def test_every_per_model_kind_of_the_table_registry_is_tracked_by_role() -> None:
    """Each per-model kind a ``TableSpec`` contributes is one MLflow renames by role: the probed model's
    loses the model, another model's goes under ``panel/``, the gate model's under ``gate_model/``. The
    tracking lists are the registry's, so a table's metric cannot be missing from tracking."""
    from blindmcq.analysis.tables import TABLES
    from blindmcq.reporting.tracking import PER_MODEL_KINDS, PER_MODEL_SINGLE, role_metrics

    for spec in TABLES:
        for kind in spec.set_kinds + spec.detail_kinds:
            assert kind in PER_MODEL_KINDS, (spec.key, kind)
            plain = {f"{kind}/me/all": 0.1, f"{kind}/gate/all": 0.2, f"{kind}/other/all": 0.3}
            named = role_metrics(plain, "me", gate_model="gate", panel=["other"])
            assert named == {
                f"{kind}/all": 0.1,
                f"gate_model/{kind}/all": 0.2,
                f"panel/other/{kind}/all": 0.3,
            }
        for kind in spec.pair_kinds:
            assert kind in PER_MODEL_SINGLE, (spec.key, kind)
            named = role_metrics({f"{kind}/me": 0.1, f"{kind}/other": 0.3}, "me", panel=["other"])
            assert named == {kind: 0.1, f"panel/other/{kind}": 0.3}


LONG_CONFIG = {
    "model": {"name": "longest"},
    "prompt": {"name": "minimal", "blind": "Answer with the letter of the option.\nOptions:\n{options}"},
    "labels": {"name": "latin", "symbols": [chr(c) for c in range(ord("A"), ord("Z") + 1)]},
}


def test_long_texts_are_no_params_but_kept_whole() -> None:
    """A prompt's text and a label scheme's symbol list would fill "Show diff only" and the parallel
    coordinates: they leave the params, and ``long_values`` (the run's artifact) keeps them whole."""
    from blindmcq.reporting.tracking import flatten, long_values

    params = flatten(LONG_CONFIG)
    assert params == {"model.name": "longest", "prompt.name": "minimal", "labels.name": "latin"}
    long = long_values(LONG_CONFIG)
    assert set(long) == {"prompt.blind", "labels.symbols"}
    assert long["prompt.blind"] == LONG_CONFIG["prompt"]["blind"] and "'Z'" in long["labels.symbols"]


def test_stage_run_names_carry_the_experiment(monkeypatch: pytest.MonkeyPatch) -> None:
    from blindmcq.stages._tracking import stage_run_name

    config = {"model": {"name": "longest"}, "dataset": {"name": "customs-default"}}
    monkeypatch.setenv("DVC_EXP_NAME", "exp-one")
    # the stage first (what differs within a pipeline run), then the experiment, the bank, the model
    assert stage_run_name("rewrite", config) == "rewrite·exp-one·customs-default·longest"
    monkeypatch.delenv("DVC_EXP_NAME")
    assert stage_run_name("rewrite", config) == "rewrite·customs-default·longest"  # dvc repro


def test_every_run_name_carries_the_bank(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage runs, the pipeline's parent, a sweep's children and its parent all name the bank, and a
    2x2 sweep's children still differ within the runs table's width (about 20 characters)."""
    from blindmcq.reporting.tracking import pipeline_parent
    from blindmcq.stages._tracking import stage_run_name
    from blindmcq.sweep import Swept, job_name, sweep_name

    config = {"model": {"name": "longest"}, "dataset": {"name": "zno-geo"}}
    monkeypatch.setenv("DVC_EXP_NAME", "exp-one")
    assert "zno-geo" in stage_run_name("report", config)
    assert "zno-geo" in pipeline_parent(config=config).name
    monkeypatch.delenv("DVC_EXP_NAME")
    assert "zno-geo" in pipeline_parent(config=config).name
    swept = [Swept("prompt", "original,minimal", "prompt"), Swept("labels", "latin,cyrillic", "labels")]
    names = [job_name([f"prompt={p}", f"labels={x}"], swept, {**config, "prompt": {"name": p}, "labels": x})
             for p in ("original", "minimal") for x in ("latin", "cyrillic")]  # fmt: skip
    assert all(" on zno-geo #" in n for n in names) and len({n[:20] for n in names}) == 4, names
    assert sweep_name(swept, {"dataset.name": "zno-geo"}).startswith(
        "sweep prompt=original,minimal labels=latin,cyrillic on zno-geo #"
    )
    # a swept bank is among the values that differ: named once, first
    by_bank = [Swept("dataset", "zno-geo,customs-default", "dataset")]
    name = job_name(["dataset=zno-geo"], by_bank, config)
    assert name.startswith("zno-geo #") and name.count("zno-geo") == 1


@pytest.mark.slow
def test_a_logged_run_lasts_as_long_as_its_work_and_keeps_long_values_as_an_artifact(tmp_path: Path) -> None:
    import json
    import time

    import mlflow

    tracking = {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "artifact_location": str(tmp_path / "a"),
                "experiment": "long"}  # fmt: skip
    started = time.time() - 600  # the work began ten minutes before it was logged
    run_id = log_run(tracking, run_name="minimal·latin #0", config=LONG_CONFIG, metrics={"x": 1.0},
                     started=started)  # fmt: skip
    assert run_id is not None
    run = mlflow.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert (run.info.end_time - run.info.start_time) / 1000 >= 599
    assert "prompt.blind" not in run.data.params and run.data.params["labels.name"] == "latin"
    path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="config/long_values.json",
                                               dst_path=str(tmp_path / "dl"))  # fmt: skip
    assert json.loads(Path(path).read_text())["prompt.blind"] == LONG_CONFIG["prompt"]["blind"]
