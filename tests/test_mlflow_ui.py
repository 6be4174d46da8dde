"""The MLflow UI as the README serves it, in headless Chromium: a sweep of 4 children sits nested under one
parent in the runs table, and the compare view lines them up by the swept params and shared metric names.
Skips, saying why, without chromium and chromium-driver (.ci/run installs them)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
NONSENSE = ["dataset=nonsenseqa", "dataset.n_test=12", "dataset.n_fewshot=0"]


def readme_ui_command() -> list[str]:
    """The README's ``mlflow ui`` line, as a user would paste it (its comment dropped)."""
    lines = [
        ln
        for ln in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
        if ln.startswith("mlflow ui")
    ]
    assert len(lines) == 1, "the README should give one `mlflow ui` command"
    return shlex.split(lines[0].split("#", 1)[0])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(predicate: Any, timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def test_readme_serves_one_worker_on_the_local_store() -> None:
    command = readme_ui_command()
    assert command[:2] == ["mlflow", "ui"]
    assert command[command.index("--workers") + 1] == "1"  # 2 cores: more workers die while starting
    assert command[command.index("--backend-store-uri") + 1] == "sqlite:///mlruns/mlflow.db"


@pytest.mark.full  # the MLflow UI server in Chromium
def test_mlflow_ui_shows_a_sweep_nested_and_comparable(tmp_path: Path, browser: Any) -> None:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    from selenium.webdriver.common.by import By

    from blindmcq.stages.corpus import build_corpus

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        dataset = OmegaConf.to_container(
            compose(config_name="config", overrides=NONSENSE).dataset, resolve=True
        )
    build_corpus(dataset, tmp_path / "results/corpus")
    env = {
        **os.environ,
        "BLINDMCQ_CONF": str(REPO / "conf"),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "MLFLOW_TRACKING_URI": "",
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    # 2 x 2 heuristic jobs with the default tracking config: mlruns/mlflow.db under the working folder
    sweep = [
        sys.executable, "-m", "blindmcq.sweep", "-m", "model=constant-a,longest", "labels=latin,cyrillic",
        "model@gate_model=longest", "probe.sample=6", "condition=blind", *NONSENSE,
        f"hydra.sweep.dir={tmp_path}/multirun", f"probe.cache={tmp_path}/cache.sqlite",
    ]  # fmt: skip
    done = subprocess.run(sweep, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "MLflow parent run" in done.stdout and "4 children" in done.stdout

    port = free_port()
    server = subprocess.Popen(
        [*readme_ui_command(), "--port", str(port)], cwd=tmp_path, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                    return response.status == 200
            except OSError:
                assert server.poll() is None, "mlflow ui exited while starting"
                return False

        wait_until(up, 240, "mlflow ui serving")
        import mlflow

        mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlruns/mlflow.db")
        experiment = mlflow.get_experiment_by_name("blindmcq")
        assert experiment.tags.get("mlflow.experimentKind") == "custom_model_development"

        # the README's route to the runs table: one parent row until it is expanded
        browser.get(f"{base}/#/experiments/{experiment.experiment_id}/runs?workflowType=machine_learning")
        body = lambda: browser.find_element(By.TAG_NAME, "body").text  # noqa: E731
        wait_until(lambda: "sweep model=constant-a,longest labels=latin,cyrillic" in body(), 90, "parent row")
        rows = lambda: browser.find_elements(By.CSS_SELECTOR, ".ag-center-cols-container .ag-row")  # noqa: E731
        assert len(rows()) == 1
        browser.find_element(
            By.CSS_SELECTOR, ".ag-row button[data-component-id$='runnamecellrenderer.tsx_46']"
        ).click()
        wait_until(lambda: len(rows()) == 5, 30, "four children under the parent")
        ids = [r.get_attribute("row-id") for r in rows()]
        parent, children = ids[0], ids[1:]
        for child in children:
            assert mlflow.get_run(child).data.tags["mlflow.parentRunId"] == parent

        # the compare view of the four children: the swept keys as params, the metrics under shared names
        runs = json.dumps(children).replace(" ", "")
        browser.get(f'{base}/#/compare-runs?runs={runs}&experiments=["{experiment.experiment_id}"]')
        wait_until(lambda: "Comparing 4 Runs" in body(), 60, "compare view")
        wait_until(lambda: "blind_acc/all" in body(), 30, "metrics in the compare view")
        text = body()
        for name in ("constant-a·latin", "constant-a·cyrillic", "longest·latin", "longest·cyrillic"):
            assert f"{name} on nonsenseqa #" in text  # the swept values first, then the bank
        lines = text.splitlines()
        for param, values in (
            ("model.name", {"constant-a", "longest"}),
            ("labels.name", {"latin", "cyrillic"}),
        ):
            (row,) = [ln for ln in lines if ln.startswith(param + " ")]
            assert set(row.split()[1:]) == values and len(row.split()) == 5, row
        # the metrics table: names every child shares (no model in them), with the children's values
        section = lines[lines.index("Metrics") + 1 : lines.index("Artifacts")]
        names = [ln for ln in section if "/" in ln or ln.isidentifier()]
        values = [ln for ln in section if ln.lstrip("-").replace(".", "", 1).isdigit()]
        assert "blind_acc/all" in names, section
        assert not any(m in n for n in names for m in ("constant-a", "longest", "panel/")), names
        assert len(values) >= 4, section
        assert all("blind_acc/all" in mlflow.get_run(c).data.metrics for c in children)
        # the swept values are also the children's tags (the sweep's summary table reads them)
        (tag,) = [ln for ln in lines if ln.startswith("sweep.labels ")]
        assert sorted(tag.split()[1:]) == ["cyrillic", "cyrillic", "latin", "latin"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
