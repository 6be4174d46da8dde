"""Stage ``answerpool``: items -> pooled probe (blind and full) and ordinary probe -> comparison.

Reads ``intervention.answerpool`` from params.yaml, or ``conf/intervention/answerpool.yaml``. Writes
under ``results/interventions/answerpool/``: ``predictions.parquet`` (one row per pooled question),
``ordinary.parquet`` (the ordinary probe of the same items), ``comparison.csv``/``comparison.md``
and ``metrics.json``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from blindmcq.analysis.interventions import pool_comparison, pool_table
from blindmcq.answers.calllog import split_call_log
from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import write_bytes, write_csv, write_text
from blindmcq.config.files import intervention_group, load_label_schemes
from blindmcq.config.schema import AnswerPoolIntervention, Config, Probe
from blindmcq.stages._main import run_stage
from blindmcq.stages._tracking import track
from blindmcq.tasks.answerpool import PoolConfig, run_answerpool
from blindmcq.wiring.probe import OUT_ROOT, probe_condition, probe_items, stage_items
from blindmcq.wiring.runs import brief

log = logging.getLogger(__name__)


def answerpool_stage(config: Config, out_dir: Path = OUT_ROOT / "answerpool") -> dict[str, float]:
    own: AnswerPoolIntervention = intervention_group(config, "answerpool")  # checked once, at entry
    conf = PoolConfig.of(own)
    items = stage_items(config, own, "intervention.answerpool")
    probe: Probe = config.group("probe")
    pooled = run_answerpool(
        items, conf, model_cfg=config.group("model"), cache=probe.cache, progress=True,
        description=config.dataset.description if config.dataset is not None else None,  # the bank's words
    )  # fmt: skip
    orders = own.ordinary_orders  # the schema's default when the config leaves it out
    condition = probe_condition(list(conf.conditions), orders, orders)
    ordinary = probe_items(config, items, label_schemes=load_label_schemes(), condition=condition)
    stable = split_call_log(pooled, out_dir / "predictions.parquet")  # `cached` varies per run: call log
    write_bytes(out_dir / "predictions.parquet", stable.to_parquet(index=False))
    write_predictions(ordinary, out_dir / "ordinary.parquet")
    comparison = pool_comparison(pooled, ordinary)
    write_csv(out_dir / "comparison.csv", comparison)
    write_text(out_dir / "comparison.md", pool_table(comparison).markdown())
    metrics: dict[str, float] = {"items": len(items), "groups": int(pooled["group_id"].nunique())}
    for row in comparison.to_dict("records"):
        for field in ("ordinary_acc", "pooled_acc", "elimination_credit", "abstention", "false_abstention",
                      "chance", "set_hit", "set_chance", "group_acc"):  # fmt: skip
            metrics[f"{row['condition']}_{field}"] = float(row[field])
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    track(config, "answerpool", metrics, out_dir)
    return metrics


def main() -> None:
    def body(config: Config) -> None:
        metrics = answerpool_stage(config)
        log.info("answerpool -> %s: %s", OUT_ROOT / "answerpool", brief(metrics))

    run_stage("answerpool", body)


if __name__ == "__main__":
    main()
