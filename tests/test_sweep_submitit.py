"""A Hydra multirun through the submitit launcher (its local executor: the SLURM code path on one
machine): two jobs in separate processes share one response cache and log one MLflow parent run with a
child run each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blindmcq.answers.predictions import read_predictions
from blindmcq.engine.cache import ResponseCache

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.full  # two submitit job processes import the analysis stack and MLflow (~1-2 min on 2 cores)
def test_submitit_local_multirun_shares_cache_and_nests_mlflow_runs(tmp_path: Path) -> None:
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    # synthetic items (NonsenseQA): the sweep needs a corpus, not the real bank
    # (no corpus planted: each job builds the configured dataset's own, datasets.fingerprint)
    env = {
        **os.environ,
        "BLINDMCQ_CONF": str(REPO / "conf"),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "MLFLOW_TRACKING_URI": "",
    }
    command = [
        sys.executable, "-m", "blindmcq.sweep", "-m",
        "hydra/launcher=blindmcq_local", "hydra.launcher.timeout_min=20",
        "model=constant-a,longest", "model@gate_model=longest", "probe.sample=5", "condition=blind",
        "dataset=nonsenseqa", "dataset.n_test=5", "dataset.n_fewshot=0",
        f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"tracking.artifact_location={tmp_path}/artifacts",
        f"hydra.sweep.dir={tmp_path}/multirun", f"probe.cache={tmp_path}/cache.sqlite",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    # submitit ran each job as its own process, with its own submitit log folder
    assert len(list((tmp_path / "multirun" / ".submitit").glob("*/*_log.out"))) == 2

    frames = [read_predictions(tmp_path / "multirun" / str(n) / "predictions.parquet") for n in (0, 1)]
    assert sorted(f["model"].iloc[0] for f in frames) == ["constant-a", "longest"]
    assert all(len(f) == 40 and f["parse_status"].eq("ok").all() for f in frames)
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
