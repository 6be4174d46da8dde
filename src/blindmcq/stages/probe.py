"""Stage ``probe``: items -> the answers of the configured model and of the panel -> ``results/predictions/``.

The panel (``panel.models``, conf/panel/) lists further model configs (``conf/model/<name>.yaml``) probed
on the same items with the same presentations; their rows share the predictions files, told apart by the
``model`` column. A member named like ``gate_model`` takes the composed ``gate_model`` config (so
``-S gate_model.seed=1`` reaches it), and the gate stage then reads its blind calls from here.

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
from blindmcq.analysis.failures import check_failed_calls
from blindmcq.answers.calllog import call_log_path
from blindmcq.answers.predictions import write_predictions, write_predictions_jsonl
from blindmcq.atomic import write_text
from blindmcq.config.files import load_label_schemes, load_models
from blindmcq.config.schema import Analysis, Config
from blindmcq.datasets.items import read_items
from blindmcq.stages._main import run_stage
from blindmcq.statutes.coverage import run_coverage
from blindmcq.tasks.probe import PresentationSetup, probe_panel, probe_sample
from blindmcq.wiring.probe import engine_settings, panel_configs, panel_manifest, panel_members

log = logging.getLogger(__name__)


def calls_summary(predictions: pd.DataFrame) -> dict[str, Any]:
    """What ``calls.json`` holds: the calls made, served from the cache, new, by parse status, and (a
    panel) per model."""
    counts: dict[str, Any] = {
        "calls": len(predictions),
        "from_cache": int(predictions["cached"].sum()),
        "new_calls": int((~predictions["cached"]).sum()),
        **{f"status_{k}": int(v) for k, v in predictions["parse_status"].value_counts().items()},
    }
    if predictions["model"].nunique() > 1:  # a panel: the same counts per model
        counts["per_model"] = {
            str(model): {"calls": len(rows), "new_calls": int((~rows["cached"]).sum())}
            for model, rows in predictions.groupby("model", observed=True, sort=False)
        }
    return counts


def write_probe_outputs(predictions: pd.DataFrame, out_dir: Any) -> dict[str, Any]:
    write_predictions(predictions, out_dir / "predictions.parquet")
    write_predictions_jsonl(predictions, out_dir / "predictions.jsonl")
    counts = calls_summary(predictions)
    log = call_log_path(out_dir / "calls.json")  # varies per run: beside the results, not hashed
    calls = log.with_suffix(".json") if log is not None else out_dir / "calls.json"
    calls.parent.mkdir(parents=True, exist_ok=True)
    write_text(calls, json.dumps(counts, indent=2) + "\n")
    return counts


def main() -> None:
    def body(config: Config) -> None:
        models = load_models(panel_members(config))  # configuration enters here, once
        items = probe_sample(read_items(paths.ITEMS), config.group("probe"))  # the seeded sample
        # lexical members only on a bank in the statutes' language that they cover (statutes/coverage.py),
        # judged on the whole bank
        absent, _ = run_coverage(config, read_items(paths.ITEMS), paths.STATUTE_INDEX, seed=config.seed)
        predictions = probe_panel(
            items,
            [config.group("model"), *panel_configs(config, models, absent=absent)],
            PresentationSetup.from_params(config, load_label_schemes()),
            engine_settings(config),
        )
        counts = write_probe_outputs(predictions, paths.PREDICTIONS_DIR)
        manifest = json.dumps(panel_manifest(config, models, absent=absent), indent=2, ensure_ascii=False)
        write_text(paths.PREDICTIONS_DIR / "models.json", manifest + "\n")
        log.info("predictions -> %s: %s", paths.PREDICTIONS_DIR, counts)
        # after the predictions are written (to inspect), before anything reports success
        analysis = config.analysis or Analysis()
        share = analysis.max_failed_share
        check_failed_calls(predictions, share, where=str(paths.PREDICTIONS))

    run_stage("probe", body)


if __name__ == "__main__":
    main()
