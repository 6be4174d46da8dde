"""Hydra entry point for sweeps.

    python -m blindmcq.sweep -m prompt=original,minimal labels=latin,cyrillic


Each job checks its composed config against the schemas (one line and exit 2 on a bad key), probes the
corpus already built by ``dvc repro corpus`` with its setting (through the shared response cache, so no
call is paid twice across jobs or sweeps), computes its OWN gate from its own ``gate`` and ``gate_model``
settings (never the pipeline's ``results/gate/gate.json``, made under other settings), analyses its
predictions, writes them to the job's Hydra output folder, and logs an MLflow child run under one parent
run per sweep. Secrets are scrubbed from the job's ``.hydra/*.yaml`` and from everything logged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import hydra
import pandas as pd
from filelock import FileLock
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from blindmcq.analysis.gate import GateResult, write_gate
from blindmcq.analysis.gate import gate as compute_gate
from blindmcq.analysis.metrics import analyze
from blindmcq.analysis.tables import build_tables, headline_metrics, write_tables
from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import write_text
from blindmcq.config.files import hydra_conf_dir
from blindmcq.config.schema import validate
from blindmcq.errors import BlindMCQError, ConfigError
from blindmcq.reporting.tracking import log_run
from blindmcq.secrets import scrub_text, scrub_tree
from blindmcq.tasks.from_params import baseline_from_params, probe_from_params, run_name

log = logging.getLogger(__name__)
CONFIG_SOURCE = "composed config (conf/config.yaml + overrides)"


def sweep_gate(
    params: dict[str, Any], predictions: pd.DataFrame, out_dir: Path
) -> tuple[GateResult | None, pd.DataFrame]:
    """This job's gate from its own ``gate`` and ``gate_model`` settings, and the predictions to analyse.

    As in the gate stage: when the gate model is the probed model its blind calls are the probe's own;
    otherwise the gate model is probed blind here (through the shared cache) and its calls join the
    analysed predictions (agreement). No blind condition: no gate.
    """
    if "blind" not in params["condition"]["conditions"]:
        log.info("gate: none (the condition has no blind calls)")
        return None, predictions
    cfg = params["gate"]
    gate_name = str(params["gate_model"]["name"])
    orders = cfg.get("orders", "all")
    gate_predictions = predictions
    if gate_name != params["model"]["name"]:
        blind = {"name": "gate", "conditions": ["blind"], "blind_orders": orders, "full_orders": [],
                 "forced": False}  # fmt: skip
        gate_predictions = probe_from_params(params, condition=blind, model_key="gate_model")
        write_predictions(gate_predictions, out_dir / "gate_predictions.parquet")
        predictions = pd.concat([predictions, gate_predictions], ignore_index=True)
        for col in predictions.columns:  # categories differ between the frames; re-unify them
            if isinstance(gate_predictions[col].dtype, pd.CategoricalDtype):
                predictions[col] = predictions[col].astype(str).astype("category")
    base = baseline_from_params(params)
    k = None if cfg.get("k") is None else int(cfg["k"])
    result = compute_gate(
        gate_predictions, gate_model=gate_name, k=k, false_rejection=cfg.get("false_rejection"),
        orders=orders, base=base,
    )  # fmt: skip
    write_gate(out_dir / "gate.json", result)
    log.info(
        "gate: model %s, k=%s, orders %s: %d accepted, %d rejected",
        gate_name, result.k, orders, len(result.accepted), len(result.rejected),
    )  # fmt: skip
    return result, predictions


def sweep_job(params: dict[str, Any], out_dir: Path, sweep_id: str | None) -> dict[str, float]:
    predictions = probe_from_params(params)
    write_predictions(predictions, out_dir / "predictions.parquet")
    base = baseline_from_params(params, orders=params["analysis"].get("headline_orders", "all"))
    gate, predictions = sweep_gate(params, predictions, out_dir)
    empty_gate = gate is not None and not gate.accepted
    if empty_gate:
        assert gate is not None
        log.warning(
            "gate: model %s at k=%s rejected all %d items, so there is no accepted set; the headline "
            "numbers below are over all items (metrics gate/n_accepted=0)",
            gate.gate_model, gate.k, len(gate.rejected),
        )  # fmt: skip
    analysis = analyze(
        predictions, gate=None if empty_gate else gate, base=base,
        failed_calls=str(params["analysis"].get("failed_calls", "drop")),
    )
    write_tables(out_dir / "tables", build_tables(analysis))
    metrics = headline_metrics(analysis)
    if gate is not None:  # the gate used, also when its accepted set is empty
        gate_k = float("nan") if gate.k is None else float(gate.k)  # per-N thresholds: see gate.json
        metrics.update({"gate/k": gate_k, "gate/n_accepted": float(len(gate.accepted)),
                        "gate/n_rejected": float(len(gate.rejected)),
                        "gate/retained_share": float(gate.retained_share)})  # fmt: skip
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    tags = {"stage": "sweep"}
    if gate is not None:
        tags.update({"gate_model": gate.gate_model, "gate_k": str(gate.k)})
    # Parallel jobs (joblib, submitit) would race to create the sweep's parent run and the MLflow
    # tables: one job at a time logs, under a lock file in the shared sweep folder.
    lock = FileLock(str(Path(sweep_id) / ".tracking.lock")) if sweep_id else contextlib.nullcontext()
    scrub_tree(out_dir)  # .hydra/*.yaml hold the overrides verbatim: scrub before they are logged
    with lock:
        log_run(
            params["tracking"],
            run_name=run_name(params),
            config=params,
            metrics=metrics,
            artifacts_dir=out_dir,
            sweep_id=sweep_id,
            tags=tags,
            model=str(params["model"]["name"]),
        )
    return metrics


def _resolve(cfg: DictConfig) -> dict[str, Any]:
    """The composed config as a dict; a bad interpolation (``${oc.env:UNSET}``) is a ConfigError."""
    from omegaconf.errors import OmegaConfBaseException

    try:
        params = OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as exc:
        key = str(getattr(exc, "full_key", "") or "config")
        raise ConfigError(key, f"cannot resolve: {exc.msg}", file=CONFIG_SOURCE) from None
    assert isinstance(params, dict)
    return params  # type: ignore[return-value]


@hydra.main(config_path=hydra_conf_dir(), config_name="config", version_base=None)
def main(cfg: DictConfig) -> float | None:
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    sweep_id = Path(hc.sweep.dir).as_posix() if hc.mode.name == "MULTIRUN" else None
    try:
        try:
            params = _resolve(cfg)
            validate(params, file=CONFIG_SOURCE)
            metrics = sweep_job(params, out_dir, sweep_id)
        finally:  # also when the job fails: Hydra wrote .hydra/ (and multirun.yaml) before it started
            scrub_tree(out_dir)
            if sweep_id:
                scrub_tree(Path(sweep_id) / "multirun.yaml")
    except BlindMCQError as exc:
        message = scrub_text(str(exc), assignments=False)
        log.error("%s", message)  # the job's log file
        print(f"blindmcq sweep: error: {message}", file=sys.stderr)
        raise SystemExit(2) from None
    key = f"blind_acc/{params['model']['name']}/all"
    return metrics.get(key)


if __name__ == "__main__":
    main()
