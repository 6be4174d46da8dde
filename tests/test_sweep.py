"""The Hydra sweep entry point: its own gate per job, secrets kept out of every file it
writes (point 6), and a joblib multirun sharing one response cache and one MLflow parent run."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from blindmcq.analysis.gate import read_gate
from blindmcq.answers.predictions import read_predictions
from blindmcq.config.schema import validate
from blindmcq.engine.cache import ResponseCache

REPO = Path(__file__).resolve().parents[1]


# Generated NonsenseQA items (no data files needed): the dataset every sweep here is configured with.
NONSENSE = ["dataset=nonsenseqa", "dataset.n_test=12", "dataset.n_fewshot=0"]


def _items(root: Path, n: int = 12) -> None:
    """The corpus stage's output for NONSENSE (with ``n`` items), fingerprint included, as the corpus a
    sweep probes."""
    from blindmcq.stages.corpus import build_corpus

    dataset = _compose([*NONSENSE, f"dataset.n_test={n}"])["dataset"]
    build_corpus(dataset, root / "results/corpus")


def _compose(overrides: list[str]) -> dict:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    params = OmegaConf.to_container(cfg, resolve=True)
    validate(params, file="test overrides")
    assert isinstance(params, dict)
    return params


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "BLINDMCQ_CONF": str(REPO / "conf"),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "MLFLOW_TRACKING_URI": "",
    }


def test_sweep_computes_its_own_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from blindmcq.sweep import sweep_job

    _items(tmp_path)
    # a stale pipeline gate made under other settings: the sweep must not read it (it would fail to parse)
    (tmp_path / "results/gate").mkdir(parents=True)
    (tmp_path / "results/gate/gate.json").write_text('{"k": 9, "gate_model": "gemma3-270m"}')
    monkeypatch.chdir(tmp_path)
    params = _compose([
        "model=constant-a", "model@gate_model=longest", "gate.k=3", "probe.sample=10", "condition=blind",
        *NONSENSE, f"probe.cache={tmp_path}/cache.sqlite", "tracking=off",
    ])  # fmt: skip
    out = tmp_path / "job"
    metrics = sweep_job(params, out, None)

    gate = read_gate(out / "gate.json")
    assert (gate.gate_model, gate.k) == ("longest", 3)  # the job's own gate model and k, not the stale file's
    # the gate is recomputed from the gate model's own blind calls: solved >= k is rejected
    calls = read_predictions(out / "gate_predictions.parquet")
    assert set(calls["model"]) == {"longest"} and calls["item_id"].nunique() == 10
    solved = calls.groupby("item_id", observed=True)["correct"].sum()
    assert sorted(gate.rejected) == sorted(solved[solved >= 3].index.astype(str))
    assert sorted(gate.accepted) == sorted(solved[solved < 3].index.astype(str))
    assert metrics["gate/k"] == 3.0 and metrics["gate/n_accepted"] == len(gate.accepted)
    assert json.loads((out / "metrics.json").read_text())["gate/k"] == 3.0


def test_sweep_gate_with_an_empty_accepted_set_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from blindmcq.sweep import sweep_job

    _items(tmp_path)
    monkeypatch.chdir(tmp_path)
    # constant slot 0 meets the key in 2 of the 8 orders of every item: at k=1 every item is rejected
    params = _compose([
        "model=constant-a", "model@gate_model=constant-a", "gate.k=1", "probe.sample=5", "condition=blind",
        *NONSENSE, f"probe.cache={tmp_path}/cache.sqlite", "tracking=off",
    ])  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="blindmcq.sweep"):
        metrics = sweep_job(params, tmp_path / "job", None)
    assert metrics["gate/n_accepted"] == 0 and metrics["gate/n_rejected"] == 5
    assert "rejected all 5 items, so there is no accepted set" in caplog.text
    calls = read_predictions(tmp_path / "job/predictions.parquet")
    rot0 = calls[calls["order_id"] == "rot0"]  # the headline orders (analysis.headline_orders)
    assert metrics["blind_acc/constant-a/all"] == pytest.approx(rot0["correct"].mean())  # over all items


def test_sweep_bad_override_is_one_line_exit_2(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "blindmcq.sweep", "probe.sample=abc", f"hydra.run.dir={tmp_path}/run"]
    done = subprocess.run(command, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "probe.sample: expected an integer or null, got 'abc'" in done.stderr
    assert "Traceback" not in done.stderr


SECRET_TOKEN = "tok-9f8e7d6c5b4a-not-real"  # stands for a real token held in the environment
SECRET_AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"


def _files_with(root: Path, needles: list[str]) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {n}" for n in needles if n.encode() in data]
    return hits


@pytest.mark.full  # two sweep processes (~1 min on 2 cores)
def test_secrets_never_reach_sweep_outputs_or_mlflow(tmp_path: Path) -> None:
    _items(tmp_path)
    env = {**_env(), "MY_API_TOKEN": SECRET_TOKEN}
    common = [
        "model=longest", "model@gate_model=longest", "probe.sample=4", "condition=blind", *NONSENSE,
        f"probe.cache={tmp_path}/cache.sqlite", f"tracking.uri=sqlite:///{tmp_path}/mlruns/mlflow.db",
        f"tracking.artifact_location={tmp_path}/mlruns/artifacts",
    ]  # fmt: skip
    # 1. a run that succeeds with the secret resolved from the environment into a config value
    # (and an AWS key id pasted into a free-text field)
    ok = [sys.executable, "-m", "blindmcq.sweep", "-m", *common, f"hydra.sweep.dir={tmp_path}/multirun",
          "prompt.system=${oc.env:MY_API_TOKEN}", f"+dataset.description=key {AWS_KEY_ID}"]  # fmt: skip
    done = subprocess.run(ok, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "multirun/0/predictions.parquet").exists()
    # 2. a credential given as a config key: refused by the schema, named without its value, exit 2
    bad = [sys.executable, "-m", "blindmcq.sweep", "-m", *common, f"hydra.sweep.dir={tmp_path}/multirun-bad",
           f"+model.aws_secret_access_key={SECRET_AWS}", "+prompt.note=${oc.env:MY_API_TOKEN}"]  # fmt: skip
    refused = subprocess.run(bad, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0
    assert "model.aws_secret_access_key: credentials do not belong in a config" in refused.stderr
    assert SECRET_AWS not in refused.stderr and SECRET_TOKEN not in refused.stderr

    assert not _files_with(tmp_path / "multirun", [SECRET_TOKEN, SECRET_AWS, AWS_KEY_ID])
    assert not _files_with(tmp_path / "multirun-bad", [SECRET_TOKEN, SECRET_AWS, AWS_KEY_ID])
    assert not _files_with(tmp_path / "mlruns", [SECRET_TOKEN, SECRET_AWS, AWS_KEY_ID])
    # the run was logged, with the secret-bearing params dropped rather than masked into the table
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlruns/mlflow.db")
    runs = mlflow.search_runs(experiment_names=["blindmcq"], output_format="list")
    child = next(r for r in runs if r.data.tags.get("role") == "child")
    assert child.data.params["model.name"] == "longest" and "prompt.system" not in child.data.params
    assert child.data.tags["gate_model"] == "longest"
    # the parent carries the shared config, the secret-bearing param dropped there too
    parent = next(r for r in runs if r.data.tags.get("role") == "parent")
    assert parent.data.params["probe.sample"] == "4" and "prompt.system" not in parent.data.params
    assert parent.data.metrics["sweep/n_children"] == 1
    assert any(p.name == "config.yaml" for p in (tmp_path / "mlruns").rglob("*"))  # .hydra logged, scrubbed


@pytest.mark.full  # two Python processes import the analysis stack and MLflow (~1 min on 2 cores)
def test_joblib_multirun_shares_cache_and_logs_parent_with_children(tmp_path: Path) -> None:
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    _items(tmp_path, n=30)
    command = [
        sys.executable, "-m", "blindmcq.sweep", "-m",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
        "model=constant-a,longest", "model@gate_model=longest", "probe.sample=5", "condition=blind",
        *NONSENSE[:2], "dataset.n_test=30",
        f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"tracking.artifact_location={tmp_path}/artifacts",
        f"hydra.sweep.dir={tmp_path}/multirun", f"probe.cache={tmp_path}/cache.sqlite",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    # each job wrote its own predictions: 5 items x 8 blind orders
    frames = [read_predictions(tmp_path / "multirun" / str(n) / "predictions.parquet") for n in (0, 1)]
    assert sorted(f["model"].iloc[0] for f in frames) == ["constant-a", "longest"]
    assert all(len(f) == 40 and f["parse_status"].eq("ok").all() for f in frames)
    # ... through one shared cache file (the constant-a job's gate calls are longest's, already cached)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        assert len(cache) == 80
        assert set().union(*(set(f["request_hash"]) for f in frames)) == cache.keys()

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlflow.db")
    runs = mlflow.search_runs(experiment_names=["blindmcq"], output_format="list")
    parents = [r for r in runs if r.data.tags.get("role") == "parent"]
    children = [r for r in runs if r.data.tags.get("role") == "child"]
    assert len(parents) == 1 and len(children) == 2
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert {c.data.params["model.name"] for c in children} == {"constant-a", "longest"}
    # both jobs logged the gate they actually used
    assert {c.data.tags["gate_model"] for c in children} == {"longest"}
    assert {c.data.params["gate_model.name"] for c in children} == {"longest"}
    # the parent: what was swept, what was fixed, and a summary over both children (whichever finished last)
    parent = parents[0]
    assert parent.data.params["sweep.model"] == "constant-a,longest"
    assert parent.data.params["probe.sample"] == "5"
    assert parent.data.metrics["sweep/n_children"] == 2
    child_acc = [c.data.metrics["blind_acc/all"] for c in children]
    assert parent.data.metrics["sweep/max/blind_acc/all"] == max(child_acc)
    assert parent.data.metrics["sweep/min/blind_acc/all"] == min(child_acc)
    assert sorted(c.info.run_name.split(" #")[0] for c in children) == [
        "constant-a on nonsenseqa",
        "longest on nonsenseqa",
    ]  # the swept value, then the bank
    # metrics named by role: the constant-a child's gate model (longest) is gate_model/*, not a panel member
    constant = next(c for c in children if c.data.params["model.name"] == "constant-a")
    assert "gate_model/blind_acc/all" in constant.data.metrics
    assert not any(k.startswith("panel/") for k in constant.data.metrics)
    # the multirun's end prints the parent's id and one row per child with the swept values; no "k=None"
    out = done.stdout
    assert f"MLflow parent run {parent.info.run_id}" in out, out[-2000:]
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["constant-a"], ["longest"])]
    assert sorted(r[0] for r in rows) == ["constant-a", "longest"]  # the run name: value, bank, hash
    assert all(r[1:3] == ["on", "nonsenseqa"] and r[3].startswith("#") for r in rows)
    assert all(r[4] == "nonsenseqa" and r[5] == r[0] for r in rows)  # the bank's column, the swept key's
    assert "k=None" not in done.stdout + done.stderr
    assert "k=None" not in "".join(p.read_text() for p in (tmp_path / "multirun").rglob("*.log"))


# --- the sweep's parent run: name, params and summary ---------------------------------------------------


def test_swept_overrides_name_what_they_change() -> None:
    from blindmcq.sweep import swept_overrides, tracking_key

    swept = swept_overrides([
        "model=constant-a,longest", "model@gate_model=longest,random", "probe.sample=5,10",
        "probe.seed=range(0,3)", "hydra/launcher=joblib", "condition=blind",
    ], conf_dir=REPO / "conf")  # fmt: skip
    assert [tuple(s) for s in swept] == [
        ("model", "constant-a,longest", "model"),  # a group: its package
        ("model@gate_model", "longest,random", "gate_model"),  # a group placed elsewhere
        ("probe.sample", "5,10", "probe.sample"),  # a value: its key
        ("probe.seed", "range(0,3)", "probe.seed"),
    ]  # Hydra's own launcher choice and the fixed override are not swept
    assert tracking_key("model@gate_model") == "sweep.model_gate_model"


def test_job_names_differ_whenever_the_config_does() -> None:
    from blindmcq.sweep import job_name, swept_overrides

    swept = swept_overrides(["model=constant-a,longest"], conf_dir=REPO / "conf")
    base = _compose(["model=longest", "probe.sample=5"])
    other_sample = _compose(["model=longest", "probe.sample=6"])
    job = ["model=longest", "probe.sample=5"]
    name = job_name(job, swept, base)
    assert name.startswith(f"longest on {base['dataset']['name']} #")  # the swept value, the bank
    assert len(name.split("#")[1]) == 8
    assert job_name(job, swept, base) == name  # deterministic
    # the sample is not swept here, yet two samples never share a name: the config hash tells them apart
    assert job_name(["model=longest", "probe.sample=6"], swept, other_sample) != name
    # outside a sweep every override is shown
    assert job_name(job, [], base).startswith("longest·5 on ")


def test_child_names_of_a_2x2_sweep_differ_within_the_runs_table_width() -> None:
    """MLflow's runs table shows about 20 characters of a name: the four children of
    ``prompt=original,minimal labels=latin,cyrillic`` must differ there, led by the swept values."""
    from blindmcq.sweep import job_name, swept_overrides

    swept = swept_overrides(["prompt=original,minimal", "labels=latin,cyrillic"], conf_dir=REPO / "conf")
    names = []
    for prompt in ("original", "minimal"):
        for labels in ("latin", "cyrillic"):
            job = [f"prompt={prompt}", f"labels={labels}"]
            names.append(job_name(job, swept, _compose(job)))
    assert len({n[:20] for n in names}) == 4, names
    assert names[3].startswith("minimal·cyrillic on ")


PARENT_SECRET = "tok-parent-5e4d3c2b1a-not-real"


def test_parent_run_carries_sweep_params_summary_and_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mlflow
    import pandas as pd

    from blindmcq.sweep import sweep_job

    _items(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MY_API_TOKEN", PARENT_SECRET)
    sweep_dir = tmp_path / "multirun"
    sweep_dir.mkdir()
    store = tmp_path / "mlruns"
    fixed = [
        "model@gate_model=longest", "probe.sample=5", "condition=blind", *NONSENSE,
        f"probe.cache={tmp_path}/cache.sqlite",
        f"tracking.uri=sqlite:///{store}/mlflow.db", f"tracking.artifact_location={store}/artifacts",
    ]  # fmt: skip
    sweep_overrides = ["model=constant-a,longest", *fixed]
    metrics = {}
    for model in ("constant-a", "longest"):
        job = [f"model={model}", *fixed]
        params = _compose(job)
        params["prompt"]["system"] = f"use {PARENT_SECRET}"  # as if resolved from ${oc.env:MY_API_TOKEN}
        metrics[model] = sweep_job(params, tmp_path / model, sweep_dir.as_posix(), job, sweep_overrides)

    mlflow.set_tracking_uri(f"sqlite:///{store}/mlflow.db")
    runs = mlflow.search_runs(experiment_names=["blindmcq"], output_format="list")
    (parent,) = [r for r in runs if r.data.tags.get("role") == "parent"]
    children = [r for r in runs if r.data.tags.get("role") == "child"]
    assert len(children) == 2 and len({c.info.run_name for c in children}) == 2
    assert sorted(c.info.run_name.split(" #")[0] for c in children) == [
        "constant-a on nonsenseqa",
        "longest on nonsenseqa",
    ]  # the swept value, then the bank
    assert parent.info.run_name.startswith("sweep model=constant-a,longest on nonsenseqa #")

    params = parent.data.params
    assert params["sweep.model"] == "constant-a,longest" and params["sweep.keys"] == "model"
    # the fixed config, under the children's own param names; nothing the sweep varies
    assert params["probe.sample"] == "5" and params["gate_model.name"] == "longest"
    assert not any(k == "model" or k.startswith("model.") for k in params)
    assert all(children[0].data.params[k] == v for k, v in params.items() if not k.startswith("sweep."))
    assert "prompt.system" not in params

    own = {m: metrics[m][f"blind_acc/{m}/all"] for m in metrics}  # each child's own model, all items
    summary = parent.data.metrics
    assert summary["sweep/n_children"] == 2
    assert summary["sweep/max/blind_acc/all"] == pytest.approx(max(own.values()))
    assert summary["sweep/min/blind_acc/all"] == pytest.approx(min(own.values()))
    assert own["constant-a"] != own["longest"]  # else max and min could not be told apart

    local = mlflow.artifacts.download_artifacts(
        run_id=parent.info.run_id, artifact_path="summary/sweep_summary.csv", dst_path=str(tmp_path / "dl")
    )
    table = pd.read_csv(local)
    assert sorted(table["model"]) == ["constant-a", "longest"] and set(table["bank"]) == {"nonsenseqa"}
    by_model = table.set_index("model")["blind_acc/all"]
    assert by_model.to_dict() == pytest.approx(own)
    assert set(table["run_name"]) == {c.info.run_name for c in children}

    leaked = [str(p) for p in store.rglob("*") if p.is_file() and PARENT_SECRET.encode() in p.read_bytes()]
    assert not leaked
    logged = [v for r in runs for v in [*r.data.params.values(), *r.data.tags.values(), r.info.run_name]]
    assert all(PARENT_SECRET not in str(v) for v in logged)
