"""Hydra entry point for sweeps.

    python -m blindmcq.sweep -m prompt=original,minimal labels=latin,cyrillic


Each job probes the corpus already built by ``dvc repro corpus`` with its composed setting (through the
shared response cache, so no call is paid twice across jobs or sweeps), analyses its predictions, writes
them to the job's Hydra output folder, and logs an MLflow child run under one parent run per sweep.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import hydra
from filelock import FileLock
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from blindmcq import paths
from blindmcq.analysis.gate import gate as compute_gate
from blindmcq.analysis.gate import read_gate
from blindmcq.analysis.metrics import analyze
from blindmcq.analysis.tables import build_tables, headline_metrics, write_tables
from blindmcq.atomic import write_text
from blindmcq.errors import BlindMCQError
from blindmcq.predictions import write_predictions
from blindmcq.stages._baseline import baseline_from_params
from blindmcq.stages.probe import probe_from_params
from blindmcq.stages.report import run_name
from blindmcq.tracking import log_run

log = logging.getLogger(__name__)
CONF_DIR = os.environ.get("BLINDMCQ_CONF", str(Path.cwd() / "conf"))


def sweep_job(params: dict[str, Any], out_dir: Path, sweep_id: str | None) -> dict[str, float]:
    predictions = probe_from_params(params)
    write_predictions(predictions, out_dir / "predictions.parquet")
    base = baseline_from_params(params, orders=params["analysis"].get("headline_orders", "all"))
    gate_file = paths.GATE_DIR / "gate.json"
    if gate_file.exists():
        gate = read_gate(gate_file)
    elif "blind" in params["condition"]["conditions"]:
        gate = compute_gate(
            predictions, gate_model=params["model"]["name"], k=int(params["gate"]["k"]), base=base
        )
    else:
        gate = None
    analysis = analyze(predictions, gate=gate, base=base)
    write_tables(out_dir / "tables", build_tables(analysis))
    metrics = headline_metrics(analysis)
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    # Parallel jobs (joblib, submitit) would race to create the sweep's parent run and the MLflow
    # tables: one job at a time logs, under a lock file in the shared sweep folder.
    lock = FileLock(str(Path(sweep_id) / ".tracking.lock")) if sweep_id else contextlib.nullcontext()
    with lock:
        log_run(
            params["tracking"],
            run_name=run_name(params),
            config=params,
            metrics=metrics,
            artifacts_dir=out_dir,
            sweep_id=sweep_id,
            tags={"stage": "sweep"},
            model=str(params["model"]["name"]),
        )
    return metrics


@hydra.main(config_path=CONF_DIR, config_name="config", version_base=None)
def main(cfg: DictConfig) -> float | None:
    params = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(params, dict)
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    sweep_id = Path(hc.sweep.dir).as_posix() if hc.mode.name == "MULTIRUN" else None
    try:
        metrics = sweep_job(params, out_dir, sweep_id)
    except BlindMCQError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    key = f"blind_acc/{params['model']['name']}/all"
    return metrics.get(key)


if __name__ == "__main__":
    main()
