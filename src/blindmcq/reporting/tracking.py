"""MLflow logging, kept at the edge: the core never imports this module.

Each run logs its composed config as params (secrets scrubbed), its headline metrics, and its report
folder as artifacts. A sweep is one parent run with a child run per setting, found by a ``sweep_id`` tag
so that jobs in separate processes (a joblib launcher) still share one parent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blindmcq.secrets import is_secret_key, scrub, scrub_text, scrub_tree

MAX_PARAM_LEN = 500
# Per-model metric kinds as the analysis names them without a probed model: ``{kind}/{model}/{set}``
# (or ``{kind}/{model}`` for agreement, expected and gap). ``reports/metrics.json`` already carries the
# comparable names (analysis.tables.metric_key); ``comparable_metrics`` turns the plain ones into them.
PER_MODEL_KINDS = (
    "blind_acc", "blind_lo", "blind_hi", "full_acc", "habit", "excess", "position_free", "blind_p_holm",
)  # fmt: skip
PER_MODEL_SINGLE = ("agreement", "expected", "gap")


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten a nested config to dotted keys; secrets (blindmcq.secrets: by key name, by the value of a
    secret-named environment variable, by AWS key shape) are dropped."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if is_secret_key(key):
            continue
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
            continue
        text = str(value)
        if scrub_text(text) != text:
            continue
        flat[name] = text[:MAX_PARAM_LEN]
    return flat


def comparable_metrics(metrics: Mapping[str, float], model: str) -> dict[str, float]:
    """Metric names that runs of different models share: the run's own model's metrics without the model
    (``blind_acc/all``, ``excess/accepted``, ``agreement``; the model is logged as a param), every other
    model's (a separate gate model, a panel) under ``panel/<model>/`` (``panel/longest/blind_acc/all``).
    Names already in that form (``reports/metrics.json``) and all other metrics pass unchanged, so this is
    the same naming as ``analysis.tables.metric_key`` and applying it twice changes nothing."""
    from blindmcq.analysis.tables import metric_key

    out: dict[str, float] = {}
    for key, value in metrics.items():
        parts = key.split("/")
        if len(parts) == 3 and parts[0] in PER_MODEL_KINDS:
            out[metric_key(parts[0], parts[1], parts[2], own=model)] = value
        elif len(parts) == 2 and parts[0] in PER_MODEL_SINGLE:
            out[metric_key(parts[0], parts[1], own=model)] = value
        else:
            out[key] = value
    return out


def _experiment(mlflow: Any, tracking: Mapping[str, Any]) -> str:
    mlflow.set_tracking_uri(tracking["uri"])
    name = tracking["experiment"]
    experiment = mlflow.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    artifacts = Path(tracking["artifact_location"]).resolve()
    artifacts.mkdir(parents=True, exist_ok=True)
    return mlflow.create_experiment(name, artifact_location=artifacts.as_uri())


def _parent_run_id(mlflow: Any, experiment_id: str, sweep_id: str) -> str:
    found = mlflow.search_runs(
        [experiment_id],
        filter_string=f"tags.sweep_id = '{sweep_id}' and tags.role = 'parent'",
        output_format="list",
    )
    if found:
        return found[0].info.run_id
    client = mlflow.MlflowClient()
    run = client.create_run(experiment_id, tags={"sweep_id": sweep_id, "role": "parent"}, run_name=sweep_id)
    client.set_terminated(run.info.run_id)
    return run.info.run_id


def log_run(
    tracking: Mapping[str, Any],
    *,
    run_name: str,
    config: Mapping[str, Any],
    metrics: Mapping[str, float],
    artifacts_dir: str | Path | None = None,
    sweep_id: str | None = None,
    tags: Mapping[str, str] | None = None,
    model: str | None = None,
) -> str | None:
    """Log one run (a child of the sweep's parent when ``sweep_id`` is given); returns its run id.

    With ``model``, that model's metrics are logged under model-free names (``comparable_metrics``)
    and ``model`` is a param, so runs of different models line up in one MLflow table."""
    if not tracking.get("enabled", True):
        return None
    import mlflow

    experiment_id = _experiment(mlflow, tracking)
    run_tags = dict(scrub(dict(tags or {})))
    if sweep_id:
        run_tags["mlflow.parentRunId"] = _parent_run_id(mlflow, experiment_id, sweep_id)
        run_tags["sweep_id"] = sweep_id
        run_tags["role"] = "child"
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_name, tags=run_tags) as run:
        params = flatten(config)
        if model is not None:
            params["model"] = model
            metrics = comparable_metrics(metrics, model)
        keys = sorted(params)
        for start in range(0, len(keys), 100):  # MLflow caps a batch at 100 params
            mlflow.log_params({k: params[k] for k in keys[start : start + 100]})
        clean = {_metric_name(k): float(v) for k, v in metrics.items() if v == v}  # drop NaN
        if clean:
            mlflow.log_metrics(clean)
        if artifacts_dir is not None and Path(artifacts_dir).exists():
            scrub_tree(artifacts_dir)  # .hydra/*.yaml, logs, reports: no credential leaves as an artifact
            mlflow.log_artifacts(str(artifacts_dir), artifact_path="report")
        return run.info.run_id


def _metric_name(name: str) -> str:
    # MLflow allows alphanumerics, _ - . space : / ; anything else becomes _
    return re.sub(r"[^\w\-. :/]", "_", name)
