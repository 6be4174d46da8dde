"""Stage ``probe``: items -> the configured model's answers -> ``results/predictions/``.

Writes ``predictions.parquet`` (the released format) and ``predictions.jsonl`` (the same rows); what
varies per run goes to ``results/calls/predictions/`` (not a DVC output): the call log and ``calls.json``
(how many calls were made, served from the cache, failed).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pandas as pd

from blindmcq import paths
from blindmcq.atomic import write_text
from blindmcq.items import Item, read_items
from blindmcq.params import require, section
from blindmcq.predictions import call_log_path, write_predictions, write_predictions_jsonl
from blindmcq.probe import run_probe, sample_items
from blindmcq.stages._main import run_stage

log = logging.getLogger(__name__)


def probe_items(
    params: dict[str, Any],
    items: list[Item],
    *,
    condition: dict[str, Any] | None = None,
    model_key: str = "model",
) -> pd.DataFrame:
    """``run_probe`` on ``items`` with the composed config; ``condition`` overrides the condition group."""
    return run_probe(
        items,
        model_cfg=section(params, model_key),
        prompt=section(params, "prompt"),
        labels=section(params, "labels"),
        reasoning=section(params, "reasoning"),
        condition=condition if condition is not None else section(params, "condition"),
        protocol_cfg=section(params, "protocol"),
        cache_path=require(params, "probe.cache"),
        concurrency=section(params, "probe").get("concurrency"),
    )


def probe_from_params(
    params: dict[str, Any], *, condition: dict[str, Any] | None = None, model_key: str = "model"
) -> pd.DataFrame:
    """The probe stage's call: the seeded sample of the corpus, probed with the composed config."""
    probe = section(params, "probe")
    items = sample_items(read_items(paths.ITEMS), probe.get("sample"), int(probe.get("seed", 0)))
    return probe_items(params, items, condition=condition, model_key=model_key)


def call_counts(predictions: pd.DataFrame) -> dict[str, int]:
    return {
        "calls": len(predictions),
        "from_cache": int(predictions["cached"].sum()),
        "new_calls": int((~predictions["cached"]).sum()),
        **{f"status_{k}": int(v) for k, v in predictions["parse_status"].value_counts().items()},
    }


def write_probe_outputs(predictions: pd.DataFrame, out_dir: Any) -> dict[str, int]:
    write_predictions(predictions, out_dir / "predictions.parquet")
    write_predictions_jsonl(predictions, out_dir / "predictions.jsonl")
    counts = call_counts(predictions)
    log = call_log_path(out_dir / "calls.json")  # varies per run: beside the results, not hashed
    calls = log.with_suffix(".json") if log is not None else out_dir / "calls.json"
    calls.parent.mkdir(parents=True, exist_ok=True)
    write_text(calls, json.dumps(counts, indent=2) + "\n")
    return counts


def main() -> None:
    def body(params: dict[str, Any]) -> None:
        predictions = probe_from_params(params)
        counts = write_probe_outputs(predictions, paths.PREDICTIONS_DIR)
        log.info("predictions -> %s: %s", paths.PREDICTIONS_DIR, counts)

    run_stage("probe", body)


if __name__ == "__main__":
    main()
