"""Hydra entry point for sweeps.

    python -m blindmcq.sweep -m prompt=original,minimal labels=latin,cyrillic


Each job checks its composed config against the schemas (one line and exit 2 on a bad key), probes the
corpus already built by ``dvc repro corpus`` with its setting (through the shared response cache, so no
call is paid twice across jobs or sweeps), computes its OWN gate from its own ``gate`` and ``gate_model``
settings (never the pipeline's ``results/gate/gate.json``, made under other settings), analyses its
predictions, writes them to the job's Hydra output folder, and logs an MLflow child run under one parent
run per sweep. Secrets are scrubbed from the job's ``.hydra/*.yaml`` and from everything logged.

Run names say what differs, first: a child is named by its swept values (``longest·cyrillic``, the
keys are its ``sweep.<key>`` tags) and a short hash of its composed config, so two runs with different
samples or settings never share a name and the runs table's default width tells them apart. A child's
start and end are those of its job. The parent is named by the sweep's overrides and carries them as
params (``sweep.<key>``: the values swept), the config every job shares (the children's param names),
and a summary that each job refreshes when it finishes: ``sweep/n_children``, ``sweep/max/<metric>``
and ``sweep/min/<metric>`` over the children's comparable metrics, and ``summary/sweep_summary.csv``
(one row per child). When the multirun ends, ``SweepSummary`` (a Hydra callback, ``conf/config.yaml``)
prints the parent's run id and that table.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from secrets import token_hex
from typing import Any, NamedTuple

import hydra
import pandas as pd
from filelock import FileLock
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from blindmcq import paths
from blindmcq.analysis.failures import check_failed_calls
from blindmcq.analysis.frame import baseline_from_params
from blindmcq.analysis.gate import GateResult, write_gate
from blindmcq.analysis.gate import gate as compute_gate
from blindmcq.analysis.metrics import analyze
from blindmcq.analysis.tables import build_tables, headline_metrics, write_tables
from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import csv_text, write_text
from blindmcq.config.files import hydra_conf_dir, hydra_conf_problem, load_label_schemes
from blindmcq.config.schema import Analysis, Gate, Probe, as_config, default, validate, validate_group
from blindmcq.errors import BlindMCQError, ConfigError, one_line, os_error_line
from blindmcq.reporting.tracking import GATE_PREFIX, PER_MODEL_KINDS, PER_MODEL_SINGLE, flatten, log_run
from blindmcq.secrets import install_env_resolver, resolve_secret_refs, scrub, scrub_text, scrub_tree
from blindmcq.wiring.probe import gate_condition, probe_from_params

log = logging.getLogger(__name__)


def process_token() -> str:
    """A token for this launch: the process id and 4 random hex digits. Hydra caches a resolver's value
    in the config (and pickles it to submitit's jobs), so every job of one sweep sees the same token."""
    return f"{os.getpid()}-{token_hex(2)}"


# conf/config.yaml's hydra.sweep.dir and hydra.run.dir end with ${blindmcq_token:}
OmegaConf.register_new_resolver("blindmcq_token", process_token, use_cache=True, replace=True)
install_env_resolver()  # every value a job resolves from ${oc.env:...} is scrubbed by value (docs/config.md)
CONFIG_SOURCE = "composed config (conf/config.yaml + overrides)"
SUMMARY_COLUMNS = (  # the child metrics the parent's table shows, when the children have them
    "blind_acc/all", "full_acc/all", "habit/all", "excess/all", "blind_acc/accepted", "excess/accepted",
    "gate/n_accepted", "gate_model/blind_acc/all",
)  # fmt: skip


def tracking_key(key: str) -> str:
    """``sweep.<key>`` as MLflow allows it in a param or tag name (``model@gate_model`` ->
    ``model_gate_model``: MLflow takes alphanumerics, ``_ - . : /`` and spaces only)."""
    return "sweep." + re.sub(r"[^\w\-. :/]", "_", key)


class Swept(NamedTuple):
    """One swept override: ``key`` as written (``model``, ``model@gate_model``, ``probe.sample``), the
    values as written (``a,b``, ``range(0,3)``), and the config path it changes (a group's package or a
    value's dotted key), whose params therefore differ between the children."""

    key: str
    values: str
    path: str


def config_hash(params: Mapping[str, Any]) -> str:
    """8 hex digits of the composed config (scrubbed first, so no credential feeds the name)."""
    text = json.dumps(scrub(dict(params)), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _parse(overrides: Sequence[str]) -> list[Any]:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_overrides(list(overrides))


def swept_overrides(overrides: Sequence[str], conf_dir: str | Path | None = None) -> list[Swept]:
    """The sweep overrides among ``overrides`` (a multirun's ``hydra.overrides.task``); Hydra's own
    (``hydra/launcher=joblib``) are not the experiment's and are left out."""
    conf_dir = conf_dir or hydra_conf_dir()
    out = []
    for o in _parse(overrides):
        if not o.is_sweep_override() or o.is_hydra_override():
            continue
        key = o.get_key_element().lstrip("+~")
        group = (Path(conf_dir) / o.key_or_group).is_dir()
        path = (o.package or o.key_or_group.replace("/", ".")) if group else o.key_or_group
        out.append(Swept(key, o.input_line.split("=", 1)[1], path))
    return out


def run_name(params: dict[str, Any]) -> str:
    """What tells runs apart: the model (and its scoring), the bank, the presentation, and the sample."""
    keys = ("model", "dataset", "prompt", "labels", "protocol", "reasoning", "condition")
    parts = [str(params[k]["name"]) for k in keys if isinstance(params.get(k), dict) and "name" in params[k]]
    model = params.get("model") or {}
    if model.get("scoring") not in (None, "letter"):  # cloze scoring tells runs apart
        parts[0] += f"[{model['scoring']}]"
    gate_model = (params.get("gate_model") or {}).get("name")
    if gate_model and gate_model != model.get("name"):
        parts.append(f"gate={gate_model}")
    probe = params.get("probe") or {}
    if "sample" in probe or "seed" in probe:
        parts.append(f"n={probe.get('sample') or 'all'},seed={probe.get('seed', default(Probe, 'seed'))}")
    return "/".join(parts)


def bank_name(params: Mapping[str, Any]) -> str:
    """The bank a run probes (``dataset.name``), "" when the config has none."""
    dataset = params.get("dataset")
    return str(dataset["name"]) if isinstance(dataset, Mapping) and "name" in dataset else ""


def job_name(job_overrides: Sequence[str], swept: Sequence[Swept], params: Mapping[str, Any]) -> str:
    """A child run's name: what differs first, short (``minimal·latin on customs-default #1a2b3c4d``):
    its values of the swept keys joined by ``·`` (the values of all its overrides when nothing is swept),
    the bank when the dataset is not among them, then the hash of its composed config. The swept keys
    are its tags (``sweep.<key>``)."""
    keys = {s.key for s in swept}
    shown = [
        o.input_line.split("=", 1)[1] for o in _parse(job_overrides)
        if not o.is_hydra_override() and (not keys or o.get_key_element().lstrip("+~") in keys)
    ]  # fmt: skip
    bank = bank_name(params) if "dataset" not in keys else ""
    text = ("·".join(shown) or "defaults") + (f" on {bank}" if bank else "")
    return scrub_text(text) + f" #{config_hash(params)}"


def fixed_params(params: Mapping[str, Any], swept: Sequence[Swept]) -> dict[str, str]:
    """The flattened config (secrets dropped) less every key a swept override can change: the same in
    every job of the sweep, so the parent can carry it."""
    paths = [s.path for s in swept]
    return {
        k: v for k, v in flatten(params).items() if not any(k == p or k.startswith(p + ".") for p in paths)
    }


def sweep_name(swept: Sequence[Swept], fixed: Mapping[str, str]) -> str:
    text = json.dumps([list(swept), sorted(fixed.items())], ensure_ascii=False)
    shown = " ".join(f"{s.key}={s.values}" for s in swept) or "no swept keys"
    bank = fixed.get("dataset.name")  # absent when the dataset is swept: its values are shown
    shown += f" on {bank}" if bank else ""
    return scrub_text(f"sweep {shown}") + f" #{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def sweep_task_overrides(sweep_dir: Path) -> list[str]:
    """The overrides the multirun was started with, as Hydra saved them in ``multirun.yaml``."""
    path = sweep_dir / "multirun.yaml"
    if not path.exists():  # a launcher that saves none: the parent then shows no swept keys
        log.warning("no %s: the sweep's parent run will not name the swept keys", path)
        return []
    saved = OmegaConf.load(path)
    return [str(o) for o in OmegaConf.select(saved, "hydra.overrides.task", default=[]) or []]


def comparable(name: str) -> bool:
    """A metric named without a model (``blind_acc/all``, ``agreement``, ``gate/k``): children of
    different models share it, so a max and min over them mean something."""
    parts = name.split("/")
    if parts[0].endswith(("_lo", "_hi")):  # an interval's bound: its max over children says nothing
        return False
    if parts[0] == GATE_PREFIX:  # the gate model's, by role: comparable whichever model it is
        parts = parts[1:]
    return (
        (len(parts) == 2 and parts[0] in PER_MODEL_KINDS)
        or (len(parts) == 1 and parts[0] in PER_MODEL_SINGLE)
        or parts[0] == "gate"
    )


def summarize_parent(tracking: Mapping[str, Any], sweep_id: str, swept: Sequence[Swept],
                     fixed: Mapping[str, str]) -> str | None:  # fmt: skip
    """Give the sweep's parent run its name, params and the summary of the children logged so far.

    Called by each job after its child is logged (under the sweep's lock), so the last job leaves the
    full summary and a sweep cut short still shows what finished. Params are logged once: they are the
    same for every job. Returns the parent's run id (None when tracking is off or no parent exists)."""
    if not validate_group("tracking", tracking).enabled:
        return None
    import mlflow
    from mlflow.entities import Metric, Param

    parents, children = _sweep_runs(tracking, sweep_id)
    if not parents:
        return None
    parent = parents[0]
    client = mlflow.MlflowClient()
    client.update_run(parent.info.run_id, name=sweep_name(swept, fixed))

    wanted = {**fixed, "sweep.keys": ",".join(s.key for s in swept)}
    wanted |= {tracking_key(s.key): s.values for s in swept}
    wanted = {k: v for k, v in wanted.items() if scrub_text(v) == v and k not in parent.data.params}
    new = [Param(k, v) for k, v in sorted(wanted.items())]
    for start in range(0, len(new), 100):  # MLflow caps a batch at 100 params
        client.log_batch(parent.info.run_id, params=new[start : start + 100])

    step, now = len(children), int(time.time() * 1000)
    values: dict[str, list[float]] = {}
    for child in children:
        for key, value in child.data.metrics.items():
            if comparable(key) and value == value:
                values.setdefault(key, []).append(value)
    metrics = [Metric("sweep/n_children", float(step), now, step)]
    for key, vals in sorted(values.items()):
        metrics += [Metric(f"sweep/max/{key}", max(vals), now, step),
                    Metric(f"sweep/min/{key}", min(vals), now, step)]  # fmt: skip
    for start in range(0, len(metrics), 1000):
        client.log_batch(parent.info.run_id, metrics=metrics[start : start + 1000])

    table = summary_table(children, swept)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sweep_summary.csv"
        path.write_text(scrub_text(csv_text(table)), encoding="utf-8")
        client.log_artifact(parent.info.run_id, str(path), artifact_path="summary")
    return parent.info.run_id


def summary_table(children: Sequence[Any], swept: Sequence[Swept]) -> pd.DataFrame:
    """One row per child run: its name and id, its bank, its value of each swept key, ``SUMMARY_COLUMNS``."""
    rows = [
        {"run_name": c.info.run_name, "run_id": c.info.run_id, "bank": c.data.params.get("dataset.name"),
         **{s.key: c.data.tags.get(tracking_key(s.key), "") for s in swept},
         **{m: c.data.metrics.get(m) for m in SUMMARY_COLUMNS}}
        for c in sorted(children, key=lambda c: c.info.run_name or "")
    ]  # fmt: skip
    columns = ["run_name", "run_id", "bank", *(s.key for s in swept if s.key != "dataset"), *SUMMARY_COLUMNS]
    table = pd.DataFrame(rows, columns=columns)
    return table.dropna(axis=1, how="all")


def _sweep_runs(tracking: Mapping[str, Any], sweep_id: str) -> tuple[list[Any], list[Any]]:
    """The sweep's parent runs and child runs in the tracking store (both empty without its experiment)."""
    import mlflow

    mlflow.set_tracking_uri(tracking["uri"])
    experiment = mlflow.get_experiment_by_name(tracking["experiment"])
    if experiment is None:
        return [], []
    runs = mlflow.search_runs(
        [experiment.experiment_id], filter_string=f"tags.sweep_id = '{sweep_id}'", output_format="list"
    )
    parents = [r for r in runs if r.data.tags.get("role") == "parent"]
    return parents, [r for r in runs if r.data.tags.get("role") == "child"]


def sweep_report(tracking: Mapping[str, Any], sweep_id: str) -> str | None:
    """What a finished sweep prints: its parent run's id and name, where to see it, and one row per
    child (the swept values and ``SUMMARY_COLUMNS``, without the run ids). None when tracking is off or
    no child was logged."""
    if not validate_group("tracking", tracking).enabled:
        return None
    parents, children = _sweep_runs(tracking, sweep_id)
    if not parents or not children:
        return None
    parent = parents[0]
    saved = sweep_task_overrides(Path(sweep_id))
    table = summary_table(children, swept_overrides(saved)).drop(columns=["run_id"])
    with pd.option_context("display.width", 200, "display.max_columns", None, "display.float_format",
                           "{:.3f}".format):  # fmt: skip
        shown = table.to_string(index=False, na_rep="-")
    return scrub_text(
        f"MLflow parent run {parent.info.run_id} ({parent.info.run_name}), {len(children)} children, "
        f"experiment {tracking['experiment']} (id {parent.info.experiment_id}) in {tracking['uri']}:\n{shown}"
    )


class SweepSummary(Callback):
    """Hydra callback (``conf/config.yaml``): at the end of a multirun, print the parent run's id and
    the children's summary table (``sweep_report``)."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            tracking = OmegaConf.to_container(config.tracking, resolve=True)
            sweep_dir = Path(str(config.hydra.sweep.dir)).as_posix()
            text = sweep_report(tracking, sweep_dir)  # type: ignore[arg-type]
        except Exception as exc:  # the jobs are done and logged: a summary failure is a note
            log.warning("sweep summary not printed: %s", scrub_text(str(exc)))
            return
        if text:
            print(text, flush=True)


def sweep_gate(
    params: dict[str, Any], predictions: pd.DataFrame, out_dir: Path, items_path: Path = paths.ITEMS
) -> tuple[GateResult | None, pd.DataFrame]:
    """This job's gate from its own ``gate`` and ``gate_model`` settings, and the predictions to analyse.

    As in the gate stage: when the gate model is the probed model its blind calls are the probe's own;
    otherwise the gate model is probed blind here (through the shared cache) and its calls join the
    analysed predictions (agreement). No blind condition: no gate.
    """
    config = as_config(params, file=None)
    if "blind" not in config.group("condition").conditions:
        log.info("gate: none (the condition has no blind calls)")
        return None, predictions
    cfg: Gate = config.group("gate")
    gate_name = config.group("gate_model").name
    orders = cfg.orders
    gate_predictions = predictions
    if gate_name != config.group("model").name:
        gate_predictions = probe_from_params(
            params, label_schemes=load_label_schemes(), condition=gate_condition(cfg), model_key="gate_model",
            items_path=items_path,
        )  # fmt: skip
        write_predictions(scrub_frame(gate_predictions), out_dir / "gate_predictions.parquet")
        predictions = pd.concat([predictions, gate_predictions], ignore_index=True)
        for col in predictions.columns:  # categories differ between the frames; re-unify them
            if isinstance(gate_predictions[col].dtype, pd.CategoricalDtype):
                predictions[col] = predictions[col].astype(str).astype("category")
    base = baseline_from_params(config, orders=orders)
    result = compute_gate(
        gate_predictions, gate_model=gate_name, k=cfg.k, false_rejection=cfg.false_rejection,
        orders=orders, base=base,
    )  # fmt: skip
    write_gate(out_dir / "gate.json", result)
    log.info(
        "gate: model %s, %s, orders %s: %d accepted, %d rejected",
        gate_name, gate_threshold(result), orders, len(result.accepted), len(result.rejected),
    )  # fmt: skip
    return result, predictions


def gate_threshold(result: GateResult) -> str:
    """The gate's k in words: one k, or a k per option count (``gate.k`` null: from the false-rejection
    rate, see gate.json), never "k=None"."""
    if result.k is not None:
        return f"k={result.k}"
    per_n = ", ".join(
        f"N={n}: k={'untestable' if k is None else k}" for n, k in sorted(result.thresholds.items())
    )
    return f"k from the false-rejection rate {result.false_rejection} ({per_n or 'see gate.json'})"


def corpus_for(params: dict[str, Any], build_dir: Path, *, who: str) -> Path:
    """The items file built from ``params``'s dataset config: ``results/corpus/items.jsonl`` when its
    fingerprint says so (``datasets.fingerprint``), else the corpus rebuilt for this config into
    ``build_dir``, said in one log line."""
    from blindmcq.datasets.registry import build_corpus, corpus_mismatch
    from blindmcq.params import section

    reason = corpus_mismatch(as_config(params, file=None), paths.ITEMS)
    if reason is None:
        return paths.ITEMS
    log.warning("%s: %s; building the corpus of this config in %s", who, reason, build_dir)
    build_corpus(section(params, "dataset"), build_dir, seed=as_config(params, file=None).seed)
    return build_dir / paths.ITEMS.name


def scrub_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every credential value (``secrets.secret_values`` and key shapes) masked in its
    text columns: a config value resolved from the environment (``prompt.name=${oc.env:MY_PAT}``)
    reaches the ``phrasing`` column, and the predictions file is an MLflow artifact."""
    out = frame.copy()
    for col in out.columns:
        series = out[col]
        categorical = isinstance(series.dtype, pd.CategoricalDtype)
        if not (categorical or series.dtype == object or pd.api.types.is_string_dtype(series.dtype)):
            continue
        values = series.cat.categories if categorical else {v for v in series if isinstance(v, str)}
        clean = {v: scrub_text(v, assignments=False) for v in values if isinstance(v, str)}
        changed = {v: c for v, c in clean.items() if c != v}
        if changed:
            fixed = series.astype(object).map(lambda v, m=changed: m.get(v, v) if isinstance(v, str) else v)
            out[col] = fixed.astype("category") if categorical else fixed.astype(series.dtype)
    return out


def sweep_job(
    params: dict[str, Any],
    out_dir: Path,
    sweep_id: str | None,
    job_overrides: Sequence[str] = (),
    sweep_overrides: Sequence[str] = (),
) -> dict[str, float]:
    started = time.time()
    # the items of this job's dataset config, never another config's corpus
    items_path = corpus_for(params, out_dir / "corpus", who="sweep")
    predictions = probe_from_params(params, label_schemes=load_label_schemes(), items_path=items_path)
    write_predictions(scrub_frame(predictions), out_dir / "predictions.parquet")
    config = as_config(params, file=None)
    analysis_cfg: Analysis = config.analysis or Analysis()
    base = baseline_from_params(config, orders=analysis_cfg.headline_orders)
    share = analysis_cfg.max_failed_share
    check_failed_calls(
        predictions, share, models=[config.group("model").name], where=str(out_dir / "predictions.parquet")
    )
    gate, predictions = sweep_gate(params, predictions, out_dir, items_path)
    check_failed_calls(predictions, share, where=str(out_dir))
    empty_gate = gate is not None and not gate.accepted
    if empty_gate:
        assert gate is not None
        log.warning(
            "gate: model %s at %s rejected all %d items, so there is no accepted set; the headline "
            "numbers below are over all items (metrics gate/n_accepted=0)",
            gate.gate_model, gate_threshold(gate), len(gate.rejected),
        )  # fmt: skip
    analysis = analyze(
        predictions,
        gate=None if empty_gate else gate,
        base=base,
        failed_calls=analysis_cfg.failed_calls,
    )
    write_tables(out_dir / "tables", build_tables(analysis))
    metrics = headline_metrics(analysis)
    if gate is not None:  # the gate used, also when its accepted set is empty
        gate_k = float("nan") if gate.k is None else float(gate.k)  # per-N thresholds: see gate.json
        metrics.update({"gate/k": gate_k, "gate/n_accepted": float(len(gate.accepted)),
                        "gate/n_rejected": float(len(gate.rejected)),
                        "gate/retained_share": float(gate.retained_share)})  # fmt: skip
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    swept = swept_overrides(sweep_overrides)
    tags = {"stage": "sweep"}
    # each child names its value of every swept key (the parent's summary table reads them)
    swept_keys = {s.key for s in swept}
    for o in _parse(job_overrides):
        key = o.get_key_element().lstrip("+~")
        if key in swept_keys:
            tags[tracking_key(key)] = o.input_line.split("=", 1)[1]
    if gate is not None:
        tags.update({"gate_model": gate.gate_model, "gate_k": "per N" if gate.k is None else str(gate.k)})
    # Parallel jobs (joblib, submitit) would race to create the sweep's parent run and the MLflow
    # tables: one job at a time logs, under a lock file in the shared sweep folder.
    lock = FileLock(str(Path(sweep_id) / ".tracking.lock")) if sweep_id else contextlib.nullcontext()
    scrub_tree(out_dir)  # .hydra/*.yaml hold the overrides verbatim: scrub before they are logged
    with lock:
        log_run(
            params["tracking"],
            run_name=job_name(job_overrides, swept, params),
            config=params,
            metrics=metrics,
            artifacts_dir=out_dir,
            sweep_id=sweep_id,
            tags=tags,
            model=str(params["model"]["name"]),
            gate_model=config.gate_model.name if config.gate_model is not None else None,
            panel=(),  # a sweep job probes no panel: its other model is the gate model, named by role
            started=started,
        )
        if sweep_id:
            summarize_parent(params["tracking"], sweep_id, swept, fixed_params(params, swept))
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
    return resolve_secret_refs(params)  # type: ignore[no-any-return]


# the folder Hydra composes from, fixed when the decorator runs; the launch check reads the same one
CONF_DIR_USED = hydra_conf_dir()


@hydra.main(config_path=CONF_DIR_USED, config_name="config", version_base=None)
def main(cfg: DictConfig) -> float | None:
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    sweep_id = Path(hc.sweep.dir).as_posix() if hc.mode.name == "MULTIRUN" else None
    try:
        try:
            params = _resolve(cfg)
            validate(params, file=CONFIG_SOURCE)
            job = [str(o) for o in hc.overrides.task]
            metrics = sweep_job(
                params, out_dir, sweep_id, job, sweep_task_overrides(Path(sweep_id)) if sweep_id else ()
            )
        except BaseException:  # also when the job fails: Hydra wrote .hydra/ (and multirun.yaml) before
            _scrub_outputs(out_dir, sweep_id, failing=True)
            raise
        _scrub_outputs(out_dir, sweep_id)
    except (BlindMCQError, OSError) as exc:
        message = scrub_text(error_line(exc, out_dir), assignments=False)
        log.error("%s", message)  # the job's log file
        print(f"blindmcq sweep: error: {message}", file=sys.stderr)
        raise SystemExit(2) from None
    key = f"blind_acc/{params['model']['name']}/all"
    return metrics.get(key)


def _scrub_outputs(out_dir: Path, sweep_id: str | None, failing: bool = False) -> None:
    """Scrub the job's folder and the sweep's ``multirun.yaml``. When the job is ``failing`` (a full
    disk, say), a scrub that fails too is logged and the job's own error is the one reported."""
    try:
        scrub_tree(out_dir)
        if sweep_id:
            scrub_tree(Path(sweep_id) / "multirun.yaml")
    except OSError as exc:
        if not failing:
            raise
        log.warning("could not scrub %s (%s): check its .hydra/ files for credentials", out_dir, exc)


def error_line(exc: BaseException, out_dir: Path | None = None) -> str:
    """One line for a job's failure: an OSError names its file (pyarrow's name none: then the job's
    output folder and the library's own words, which carry the path). Hydra's errors (some of which are
    OSErrors) give their first line: the rest lists the options and search path."""
    if isinstance(exc, HydraException):
        return one_line(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    if isinstance(exc, OSError):
        if exc.filename is not None:
            return os_error_line(exc)
        return one_line(f"output folder {out_dir or '?'}: {exc}")
    return one_line(str(exc))


def cli() -> None:
    """``python -m blindmcq.sweep``: Hydra's main, where a failure of Hydra's own (the output folder
    cannot be made or its ``.hydra/`` files written; a bad override) is one line and exit 2, not the
    traceback Hydra prints."""
    problem = hydra_conf_problem(CONF_DIR_USED)
    if problem:  # before Hydra, whose own words ("Primary config directory not found") say not what to do
        print(f"blindmcq sweep: error: {problem}", file=sys.stderr)
        raise SystemExit(2)
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra re-raises instead of printing the trace itself
    try:
        main()
    except (OSError, HydraException) as exc:
        print(f"blindmcq sweep: error: {scrub_text(error_line(exc), assignments=False)}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    cli()
