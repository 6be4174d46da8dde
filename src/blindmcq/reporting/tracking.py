"""MLflow logging, kept at the edge: the core never imports this module.

Each run logs its composed config as params (secrets scrubbed), its headline metrics, and its report
folder as artifacts. Runs are grouped under parents, found by a tag so that separate processes share one:
a sweep is one parent run (tag ``sweep_id``) with a child run per setting; a pipeline run (``dvc repro``,
``dvc exp run``) is one parent run (tag ``pipeline_id``: the DVC experiment name, the git revision and the
hash of ``params.yaml``) with each stage that logs (rewrite, answerpool, report) as a child.

Params are the config's short values: a text longer than ``LONG_PARAM`` characters or on several lines
(a prompt's text, a label scheme's symbol list) is no param; the run's ``config/long_values.json``
artifact holds it, so the runs table and "Show diff only" compare names (``prompt.name``,
``labels.name``), not paragraphs. A run's start and end are those of the work it logs (``started``).

Metrics are named by the model's role in the run (``role_metrics``): the probed model's carry no model
name (``blind_acc/all``), the gate model's are ``gate_model/blind_acc/all``, a panel member's
``panel/<model>/blind_acc/all`` (a gate model that is also a panel member has both).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from blindmcq.analysis.tables import PAIR_KINDS, PER_MODEL_KINDS, metric_key, metric_name
from blindmcq.config.schema import Dataset, Tracking, default, validate_group
from blindmcq.secrets import is_secret_key, scrub, scrub_text, scrub_tree

MAX_PARAM_LEN = 500
LONG_PARAM = 64  # longer (or multi-line) values are an artifact, not a param
LONG_VALUES = "config/long_values.json"
# Per-model metric kinds as the analysis names them without a probed model: ``{kind}/{model}/{set}``
# (or ``{kind}/{model}`` for agreement, expected and gap). ``reports/metrics.json`` already carries the
# comparable names (analysis.tables.metric_key); ``comparable_metrics`` turns the plain ones into them.
# Both lists derive from the table registry (analysis.tables.TABLES): a kind a table contributes is
# tracked by construction.
PER_MODEL_SINGLE = PAIR_KINDS  # two-part names (PER_MODEL_KINDS: three-part)
GATE_PREFIX = "gate_model"  # the gate model's metrics, whichever model it is: one column across runs
PANEL_PREFIX = "panel"


def flatten_all(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten a nested config to dotted keys, every value as text; secrets (blindmcq.secrets: by key
    name, by the value of a secret-named environment variable, by AWS key shape) are dropped."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if is_secret_key(key):
            continue
        if isinstance(value, Mapping):
            flat.update(flatten_all(value, f"{name}."))
            continue
        text = str(value)
        if scrub_text(text) != text:
            continue
        flat[name] = text
    return flat


def is_long(text: str) -> bool:
    """A value too long to read as a column (a prompt's text, a symbol list): an artifact, not a param."""
    return len(text) > LONG_PARAM or "\n" in text


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """The params of a config: ``flatten_all`` less its long values (``is_long``)."""
    return {k: v[:MAX_PARAM_LEN] for k, v in flatten_all(config, prefix).items() if not is_long(v)}


def long_values(config: Mapping[str, Any]) -> dict[str, str]:
    """The values ``flatten`` leaves out for their length, by dotted key (the ``LONG_VALUES`` artifact)."""
    return {k: v for k, v in flatten_all(config).items() if is_long(v)}


def process_start() -> float:
    """When this process started (seconds since the epoch): a stage's work began then."""
    import psutil

    return float(psutil.Process().create_time())


def comparable_metrics(metrics: Mapping[str, float], model: str) -> dict[str, float]:
    """Metric names that runs of different models share: the run's own model's metrics without the model
    (``blind_acc/all``, ``excess/accepted``, ``agreement``; the model is logged as a param), every other
    model's (a separate gate model, a panel) under ``panel/<model>/`` (``panel/longest/blind_acc/all``).
    Names already in that form (``reports/metrics.json``) and all other metrics pass unchanged, so this is
    the same naming as ``analysis.tables.metric_key`` and applying it twice changes nothing."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        parts = key.split("/")
        # a model's name may hold slashes ("mockllm/model", "openai/gpt-4o"): the kind is the first part
        # and the set the last, the model all between
        if len(parts) >= 3 and parts[0] in PER_MODEL_KINDS:
            out[metric_key(parts[0], "/".join(parts[1:-1]), parts[-1], own=model)] = value
        elif len(parts) >= 2 and parts[0] in PER_MODEL_SINGLE:
            out[metric_key(parts[0], "/".join(parts[1:]), own=model)] = value
        else:
            out[key] = value
    return out


def role_metrics(
    metrics: Mapping[str, float], model: str, *, gate_model: str | None = None,
    panel: Iterable[str] | None = None,
) -> dict[str, float]:  # fmt: skip
    """``comparable_metrics``, then each other model's metrics named by its role: the gate model's under
    ``gate_model/`` (so a ``model=constant-a`` child gated by ``longest`` logs ``gate_model/blind_acc/all``,
    not ``panel/longest/...``); a gate model that is also a panel member keeps its ``panel/`` names and gets
    the ``gate_model/`` copy. Any other model (a panel member, ``analysis.extra_predictions``) stays under
    ``panel/<model>/``; an intervention's ``<model>/<kind>`` (the rewrite's per-model figures) is named
    the same way. ``panel`` None: the gate model counts as a panel member (roles unknown)."""
    out = comparable_metrics(metrics, model)
    own = metric_name(model)
    gate = metric_name(gate_model) if gate_model and metric_name(gate_model) != own else None
    members = None if panel is None else {metric_name(m) for m in panel}
    models = {own} | (members or set()) | ({gate} if gate else set())
    named: dict[str, float] = {}
    for key, value in out.items():
        parts = key.split("/")
        if len(parts) == 2 and metric_name(parts[0]) in models:  # an intervention's "<model>/<kind>"
            who = metric_name(parts[0])
            key = parts[1] if who == own else f"{PANEL_PREFIX}/{who}/{parts[1]}"
            parts = key.split("/")
        if len(parts) >= 3 and parts[0] == PANEL_PREFIX:
            who, rest = parts[1], "/".join(parts[2:])
            if who == gate:
                named[f"{GATE_PREFIX}/{rest}"] = value
                if members is not None and who not in members:
                    continue  # the gate model only: one name, by its role
        named[key] = value
    return named


class Parent(NamedTuple):
    """What groups runs under one parent: the tag ``key`` = ``value`` found on the parent (so separate
    processes share it), its run name, and the tags and params it is created with."""

    key: str
    value: str
    name: str
    tags: Mapping[str, str] = {}
    params: Mapping[str, str] = {}


def git_revision(cwd: str | Path | None = None) -> str:
    """The checked-out commit, or "" outside a git repository (a release tarball)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def pipeline_parent(
    params_file: str | Path = "params.yaml", config: Mapping[str, Any] | None = None
) -> Parent:
    """The parent run of this pipeline run: one per DVC experiment (``DVC_EXP_NAME``, which ``dvc exp run``
    sets), git revision (``DVC_EXP_BASELINE_REV`` under ``dvc exp run``, else ``HEAD``) and
    ``params.yaml`` content. ``dvc repro`` twice on the same commit and params shares one parent. Its
    name (``exp exp-one on customs-default 1a2b3c4 #5d6e7f80``) carries the bank of ``config``."""
    path = Path(params_file)
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""
    exp = scrub_text(os.environ.get("DVC_EXP_NAME", ""))
    rev = os.environ.get("DVC_EXP_BASELINE_REV") or git_revision()
    value = f"{exp or 'repro'}@{rev[:12] or 'nogit'}#{digest[:12]}"
    dataset = (config or {}).get("dataset")
    bank = str(dataset.get("name", default(Dataset, "name"))) if isinstance(dataset, Mapping) else ""
    on = f" on {scrub_text(bank)}" if bank else ""  # the bank, in every run name
    name = f"{'exp ' + exp if exp else 'dvc repro'}{on} {rev[:7] or 'nogit'} #{digest[:8]}"
    tags = {"dvc.exp_name": exp or "(dvc repro)", "git.revision": rev or "(not a git checkout)",
            "params_yaml.sha256": digest, "stage": "pipeline"}  # fmt: skip
    if rev:
        tags["mlflow.source.git.commit"] = rev  # MLflow's own column for it
    params = flatten(config) if config is not None else {}
    return Parent("pipeline_id", value, name, tags, params)


def stage_parent(config: Mapping[str, Any]) -> Parent:
    """A stage's parent: the sweep's when ``BLINDMCQ_SWEEP_ID`` is set, else this pipeline run's."""
    sweep_id = os.environ.get("BLINDMCQ_SWEEP_ID")
    if sweep_id:
        return Parent("sweep_id", sweep_id, sweep_id)
    return pipeline_parent(config=config)


# MLflow 3's UI opens an experiment without this tag on its (empty) GenAI traces page; "machine learning"
# experiments open on the runs table.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}


def check_store(uri: str, cwd: Path | None = None) -> None:
    """Refuse a relative SQLite store (``sqlite:///mlruns/mlflow.db``) from a subfolder of a project (a
    folder above ``cwd`` holds ``dvc.yaml``): MLflow would quietly create a new, empty store there, and
    the runs logged so far would read "not found"."""
    from blindmcq.errors import ConfigError

    prefix = "sqlite:///"
    if not uri.startswith(prefix) or uri[len(prefix) :].startswith("/"):
        return
    here = (cwd or Path.cwd()).resolve()
    if (here / "dvc.yaml").is_file():
        return
    root = next((p for p in here.parents if (p / "dvc.yaml").is_file()), None)
    if root is not None:
        store = root / uri[len(prefix) :]
        raise ConfigError(
            "tracking.uri",
            f"{uri} is relative and this folder ({here}) is not the project root: it would open a new, "
            f"empty store here; run from {root}, or give the store's absolute URI ({prefix}{store})",
        )


def _experiment(mlflow: Any, tracking: Tracking) -> str:
    check_store(tracking.uri)
    mlflow.set_tracking_uri(tracking.uri)
    name = tracking.experiment
    experiment = mlflow.get_experiment_by_name(name)
    if experiment is not None:
        if not all(experiment.tags.get(k) for k in EXPERIMENT_KIND):  # made by an earlier version
            for key, value in EXPERIMENT_KIND.items():
                mlflow.MlflowClient().set_experiment_tag(experiment.experiment_id, key, value)
        return experiment.experiment_id
    artifacts = Path(tracking.artifact_location).resolve()
    artifacts.mkdir(parents=True, exist_ok=True)
    return mlflow.create_experiment(name, artifact_location=artifacts.as_uri(), tags=EXPERIMENT_KIND)


def _parent_run_id(mlflow: Any, experiment_id: str, parent: Parent) -> str:
    value = parent.value.replace("'", "_")
    found = mlflow.search_runs(
        [experiment_id],
        filter_string=f"tags.{parent.key} = '{value}' and tags.role = 'parent'",
        output_format="list",
    )
    if found:
        return found[0].info.run_id
    from mlflow.entities import Param

    client = mlflow.MlflowClient()
    tags = {**scrub(dict(parent.tags)), parent.key: value, "role": "parent"}
    run = client.create_run(experiment_id, tags=tags, run_name=parent.name)
    new = [Param(k, v) for k, v in sorted(parent.params.items())]
    for start in range(0, len(new), 100):  # MLflow caps a batch at 100 params
        client.log_batch(run.info.run_id, params=new[start : start + 100])
    client.set_terminated(run.info.run_id)
    return run.info.run_id


def log_run(
    tracking: Tracking | Mapping[str, Any],
    *,
    run_name: str,
    config: Mapping[str, Any],
    metrics: Mapping[str, float],
    artifacts_dir: str | Path | None = None,
    sweep_id: str | None = None,
    tags: Mapping[str, str] | None = None,
    model: str | None = None,
    parent: Parent | None = None,
    parent_metrics: Mapping[str, float] | None = None,
    gate_model: str | None = None,
    panel: Iterable[str] | None = None,
    started: float | None = None,
) -> str | None:
    """Log one run, a child of ``parent`` (or of the sweep's parent when ``sweep_id`` is given); returns
    its run id. ``parent_metrics`` are logged on the parent too (the report's headline figures, so that
    pipeline runs compare in the parents' table).

    With ``model``, metrics are named by role (``role_metrics``: the gate model ``gate_model``, the panel
    members ``panel``, None: roles unknown) and ``model`` is a param, so runs of different models line up
    in one MLflow table. ``config`` is the composed mapping as written, what the run logs as params.
    ``tracking``: the typed group, or its mapping (checked here). ``started``: when the logged work began
    (seconds since the epoch; default when this process started); the run ends when it is logged, so its
    duration is the work's."""
    tracking = validate_group("tracking", tracking)
    started = process_start() if started is None else started
    if not tracking.enabled:
        return None
    import mlflow

    if parent is None and sweep_id:
        parent = Parent("sweep_id", sweep_id, sweep_id)
    experiment_id = _experiment(mlflow, tracking)
    run_tags = dict(scrub(dict(tags or {})))
    parent_id = None
    if parent is not None:
        parent_id = _parent_run_id(mlflow, experiment_id, parent)
        run_tags["mlflow.parentRunId"] = parent_id
        run_tags[parent.key] = parent.value.replace("'", "_")
        run_tags["role"] = "child"
        run_tags.update({k: v for k, v in scrub(dict(parent.tags)).items() if k != "stage"})
    client = mlflow.MlflowClient()
    run = client.create_run(
        experiment_id, start_time=int(started * 1000), tags=run_tags, run_name=scrub_text(run_name)
    )
    run_id = run.info.run_id
    status = "FAILED"
    try:
        logged = flatten(config)
        if model is not None:
            logged["model"] = model
            metrics = role_metrics(metrics, model, gate_model=gate_model, panel=panel)
        from mlflow.entities import Metric, Param

        new = [Param(k, logged[k]) for k in sorted(logged)]
        for start in range(0, len(new), 100):  # MLflow caps a batch at 100 params
            client.log_batch(run_id, params=new[start : start + 100])
        now = int(time.time() * 1000)
        clean = [Metric(_metric_name(k), float(v), now, 0) for k, v in metrics.items() if v == v]  # drop NaN
        for start in range(0, len(clean), 1000):
            client.log_batch(run_id, metrics=clean[start : start + 1000])
        long = long_values(config)
        if long:
            client.log_text(run_id, json.dumps(long, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                            LONG_VALUES)  # fmt: skip
        if artifacts_dir is not None and Path(artifacts_dir).exists():
            scrub_tree(artifacts_dir)  # .hydra/*.yaml, logs, reports: no credential leaves as an artifact
            client.log_artifacts(run_id, str(artifacts_dir), artifact_path="report")
        if parent_id is not None and parent_metrics:
            client.log_batch(parent_id, metrics=[
                Metric(_metric_name(k), float(v), now, 0) for k, v in sorted(parent_metrics.items()) if v == v
            ])  # fmt: skip
        status = "FINISHED"
    finally:
        client.set_terminated(run_id, status=status, end_time=int(time.time() * 1000))
    return str(run_id)


def _metric_name(name: str) -> str:
    # MLflow allows alphanumerics, _ - . space : / ; anything else becomes _
    return re.sub(r"[^\w\-. :/]", "_", name)
