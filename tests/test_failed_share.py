"""A probed model that answered nothing, or failed more than
``analysis.max_failed_share`` of its calls, stops the run with one line (not a FINISHED run without it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from blindmcq.analysis.failures import RunFailed, check_failed_calls
from blindmcq.config.schema import validate
from blindmcq.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
NONSENSE = ["dataset=nonsenseqa", "dataset.n_test=6", "dataset.n_fewshot=0"]


def _frame(statuses: dict[str, list[str]]) -> pd.DataFrame:
    rows = [
        {"model": m, "parse_status": s, "error": "HTTP401: bad key" if s == "error" else None}
        for m, ss in statuses.items()
        for s in ss
    ]
    return pd.DataFrame(rows)


def test_a_model_with_no_answer_stops_the_run_naming_it() -> None:
    frame = _frame({"good": ["ok"] * 4, "dead": ["error"] * 4})
    with pytest.raises(RunFailed, match=r"model dead: no answer \(4 of 4 calls") as info:
        check_failed_calls(frame, 0.5)
    assert "HTTP401" in str(info.value) and "\n" not in str(info.value)


def test_a_model_missing_from_the_predictions_stops_the_run() -> None:
    with pytest.raises(RunFailed, match="model absent: no calls"):
        check_failed_calls(_frame({"good": ["ok"]}), 0.5, models=["absent"])


def test_the_share_is_the_threshold() -> None:
    frame = _frame({"m": ["ok"] * 7 + ["error"] * 3})  # 30% failed
    check_failed_calls(frame, 0.3)  # at the share: analysed as before
    with pytest.raises(RunFailed, match=r"model m: 30% of calls failed"):
        check_failed_calls(frame, 0.29)
    check_failed_calls(_frame({"m": ["refused", "ok"]}), 0.0)  # a refusal is no backend failure


def test_max_failed_share_is_a_documented_checked_key() -> None:
    params = __import__("yaml").safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    assert 0 < params["analysis"]["max_failed_share"] < 1
    assert "max_failed_share" in (REPO / "conf/analysis/default.yaml").read_text(encoding="utf-8")
    params["analysis"]["max_failed_share"] = 1.5
    with pytest.raises(ConfigError, match=r"analysis\.max_failed_share"):
        validate(params, file="params.yaml")


def _compose(overrides: list[str]) -> dict:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    params = OmegaConf.to_container(cfg, resolve=True)
    validate(params, file="test overrides")
    assert isinstance(params, dict)
    return params


def test_a_sweep_whose_model_answered_nothing_stops_before_it_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindmcq.sweep import sweep_job

    monkeypatch.chdir(tmp_path)  # no corpus here: the job builds its dataset's own
    # every call times out: 503s on every call would be an outage, which stops the run at once instead
    # (engine.run.server_failed; tests/backends/test_bedrock_bounds.py)
    params = _compose([*NONSENSE,
        "model=fault-demo", "model.faults.timeout=1.0", "model.faults.throttle=0",
        "model.faults.tail_rate=0", "model.faults.latency_s=0", "model.retry.max_attempts=1",
        "model@gate_model=longest", "probe.sample=4", "condition=blind",
        f"probe.cache={tmp_path}/cache.sqlite", "tracking=off",
    ])  # fmt: skip
    out = tmp_path / "job"
    with pytest.raises(RunFailed, match="model fault-demo: no answer"):
        sweep_job(params, out, None)
    assert (out / "predictions.parquet").is_file()  # kept, to inspect
    assert not (out / "metrics.json").exists()  # nothing reports success


def test_the_sweep_entry_point_exits_non_zero_with_one_line(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "BLINDMCQ_CONF": str(REPO / "conf"), "MLFLOW_TRACKING_URI": "",
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "blindmcq.sweep", *NONSENSE, "model=fault-demo",
         "model.faults.timeout=1.0", "model.faults.throttle=0", "model.faults.tail_rate=0",
         "model.retry.max_attempts=1",
         "model@gate_model=longest", "probe.sample=4", "condition=blind", "tracking=off",
         f"probe.cache={tmp_path}/cache.sqlite", f"hydra.run.dir={tmp_path}/run"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "blindmcq sweep: error" in line]
    assert len(lines) == 1 and "fault-demo" in lines[0] and "Traceback" not in proc.stderr
