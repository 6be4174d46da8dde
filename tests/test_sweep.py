"""A Hydra multirun through the joblib launcher: two jobs in parallel processes share one response cache
and log one MLflow parent run with a child run each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blindmcq.cache import ResponseCache
from blindmcq.datasets.registry import load_dataset
from blindmcq.items import write_items
from blindmcq.predictions import read_predictions

REPO = Path(__file__).resolve().parents[1]
BANK = str(Path(__file__).parent / "fixtures/samples/ua-customs-exam/questions.json")  # real items


@pytest.mark.slow  # two Python processes import the analysis stack and MLflow (~1 min on 2 cores)
def test_joblib_multirun_shares_cache_and_logs_parent_with_children(tmp_path: Path) -> None:
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    write_items(
        tmp_path / "results/corpus/items.jsonl",
        load_dataset({"loader": "customs", "path": BANK, "parts": ["legislation"]})[:30],
    )
    env = {
        **os.environ,
        "BLINDMCQ_CONF": str(REPO / "conf"),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "MLFLOW_TRACKING_URI": "",
    }
    command = [
        sys.executable, "-m", "blindmcq.sweep", "-m",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
        "model=constant-a,longest", "probe.sample=5", "condition=blind",
        f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"tracking.artifact_location={tmp_path}/artifacts",
        f"hydra.sweep.dir={tmp_path}/multirun", f"probe.cache={tmp_path}/cache.sqlite",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    # each job wrote its own predictions: 5 items x 8 blind orders
    frames = [read_predictions(tmp_path / "multirun" / str(n) / "predictions.parquet") for n in (0, 1)]
    assert sorted(f["model"].iloc[0] for f in frames) == ["constant-a", "longest"]
    assert all(len(f) == 40 and f["parse_status"].eq("ok").all() for f in frames)
    # ... through one shared cache file
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
