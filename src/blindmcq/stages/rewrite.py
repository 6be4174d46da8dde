"""Stage ``rewrite``: items -> rewritten bank -> blind probe before and after -> comparison.

Probed before and after: the panel's members (``intervention.rewrite.models: panel``, the default:
length matching should close the surface strategies' leak) or the probed model (``model``, or no panel).

Reads ``intervention.rewrite`` from params.yaml, or ``conf/intervention/rewrite.yaml`` when the
composed config has none. Writes under ``results/interventions/rewrite/``: ``items.jsonl`` (the new
bank version, provenance in ``meta.rewrite``), ``diff.csv``/``diff.md``, ``predictions_before.parquet``,
``predictions_after.parquet``, ``fluency.jsonl`` (the fluency scores, through the response cache; empty
when no probed model scores option texts), ``comparison.csv``/``comparison.md`` and ``metrics.json``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pandas as pd

from blindmcq.analysis.interventions import (
    fluency_change,
    fluency_note,
    read_fluency,
    rewrite_comparison,
    rewrite_table,
)
from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import write_csv, write_text
from blindmcq.backends.registry import abilities_of
from blindmcq.config.files import intervention_group, load_label_schemes, load_model_file, load_models
from blindmcq.config.schema import Config, Probe, RewriteIntervention, as_written
from blindmcq.datasets.items import write_items
from blindmcq.stages._main import run_stage
from blindmcq.stages._tracking import track
from blindmcq.tasks.rewrite import (
    FLUENCY_COLUMNS,
    RewriteConfig,
    fluency_scores,
    rewrite_items,
    write_diff,
    write_fluency,
)
from blindmcq.wiring.probe import (
    OUT_ROOT,
    panel_configs,
    panel_members,
    probe_condition,
    probe_items,
    stage_items,
)
from blindmcq.wiring.runs import brief

log = logging.getLogger(__name__)


def rewrite_stage(config: Config, out_dir: Path = OUT_ROOT / "rewrite") -> dict[str, float]:
    own: RewriteIntervention = intervention_group(config, "rewrite")  # checked once, at entry
    if own.model is None:
        own = replace(own, model=as_written(config, "model"))
    elif isinstance(own.model, str):  # a conf/model name: its config enters here
        own = replace(own, model=load_model_file(own.model))
    if own.statutes is None and config.statutes is not None and config.statutes.path:
        own = replace(own, statutes=config.statutes.path)
    conf = RewriteConfig.of(own)
    items = stage_items(config, own, "intervention.rewrite")
    description = config.dataset.description if config.dataset is not None else None  # the bank's words
    probe: Probe = config.group("probe")
    rewritten = rewrite_items(items, conf, cache=probe.cache, progress=True, description=description)
    write_items(out_dir / "items.jsonl", rewritten)
    diff = write_diff(rewritten, out_dir)
    conditions = list(own.conditions)
    condition = probe_condition(conditions, own.blind_orders, own.full_orders)
    label_schemes = load_label_schemes()
    # "panel": the panel's members (surface strategies show whether length matching closes their leak);
    # "model", or no panel: the probed model
    panel = own.models == "panel"
    models = panel_configs(config, load_models(panel_members(config))) if panel else []
    models = models or [config.group("model")]
    before, after = (
        pd.concat(
            [
                probe_items(config, its, label_schemes=label_schemes, condition=condition, model_cfg=m)
                for m in models
            ]
        )
        for its in (items, rewritten)
    )
    write_predictions(before, out_dir / "predictions_before.parquet")
    write_predictions(after, out_dir / "predictions_after.parquet")
    comparison = rewrite_comparison(before, after, conditions)
    table = rewrite_table(comparison)
    write_csv(out_dir / "comparison.csv", comparison)
    # fluency before and after, by the first model that can score option texts (a cloze model): its
    # scores through the response cache into fluency.jsonl, the figures from that file
    scorer = next((m for m in models if abilities_of(m).score_options), None)
    scores = pd.DataFrame(columns=list(FLUENCY_COLUMNS))
    if scorer is not None:
        cue = config.group("prompt").answer_cue
        scores = fluency_scores(items, rewritten, scorer, cue, cache=probe.cache, progress=True)
    write_fluency(out_dir / "fluency.jsonl", scores)
    fluency = fluency_change(read_fluency(out_dir / "fluency.jsonl")) if scorer is not None else {}
    note = fluency_note(fluency, scorer.name) if scorer is not None else ""
    write_text(out_dir / "comparison.md", table.markdown() + (f"\n{note}\n" if note else ""))
    metrics: dict[str, float] = {"items": len(items), "distractors_changed": int(diff["changed"].sum())}
    metrics |= fluency
    probed = config.group("model").name
    for row in comparison.itertuples():
        # the probed model's names carry no model (as in reports/metrics.json); another's is prefixed
        prefix = "" if row.model == probed else f"{row.model}/"
        fields = ["acc", "lo", "hi", "chance", "p_above", "p_below"]
        if row.version == "after":  # the item-level comparison with before
            fields += ["items_up", "items_down", "sign_p", "sign_p_holm"]
        for field in fields:
            metrics[f"{prefix}{row.condition}_{row.version}_{field}"] = float(getattr(row, field))
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    track(config, "rewrite", metrics, out_dir)
    return metrics


def main() -> None:
    def body(config: Config) -> None:
        metrics = rewrite_stage(config)
        log.info("rewrite -> %s: %s", OUT_ROOT / "rewrite", brief(metrics))

    run_stage("rewrite", body)


if __name__ == "__main__":
    main()
