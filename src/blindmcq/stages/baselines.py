"""Stage ``baselines``: what can be recovered without reasoning over the question (paper Table 2).

items.jsonl + statute index -> ``results/baselines/``: ``picks.parquet`` (one row per strategy and item,
surface strategies and lexical search alike), ``lexical.parquet`` (the matched provision per option, so a
reader can see why), ``summary.csv`` and ``facts.json`` (key-position shares, key minus distractor length).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pandas as pd

from blindmcq import paths
from blindmcq.atomic import atomic_path, write_csv, write_text
from blindmcq.auditing.surface import lexical_picks, summarise, surface_strategies
from blindmcq.config.schema import Config
from blindmcq.datasets.items import read_items
from blindmcq.stages._main import run_stage
from blindmcq.statutes.coverage import run_coverage
from blindmcq.statutes.lexical import lexical_baseline

log = logging.getLogger(__name__)


def build_baselines(config: Config) -> pd.DataFrame:
    """The Table 2 picks and summary of the typed config's bank (drawn with its ``seed``); lexical search
    only on a bank in the statutes' language (``statutes.language.lexical_absent``) that the statutes
    cover (``statutes.coverage``, its figures in ``facts.json``), else ``facts.json`` says why its row is
    absent."""
    seed = config.seed
    items = read_items(paths.ITEMS)
    surface = surface_strategies(items, seed)
    out = paths.BASELINES_DIR
    # out of Table 2 (and its families) on a bank in another language or one the statutes do not cover
    absent, coverage = run_coverage(config, items, paths.STATUTE_INDEX, seed=seed)
    facts: dict[str, Any] = {**surface.facts, "n_skipped": surface.n_skipped}
    if absent is None:
        lexical, lex_summary = lexical_baseline(
            paths.ITEMS, paths.STATUTE_INDEX, out / "lexical.parquet", seed=seed
        )
        lex_picks = lexical_picks(lexical)
        picks = pd.concat([surface.picks, lex_picks], ignore_index=True, join="inner")
        lex_row = summarise(lex_picks, n_usable=len(lex_picks), n_skipped=surface.n_skipped)
        summary = pd.concat([surface.summary, lex_row], ignore_index=True)
        facts["lexical"] = lex_summary.to_json()
    else:
        log.warning("%s", absent)
        (out / "lexical.parquet").unlink(missing_ok=True)  # a previous run's matches are not this bank's
        picks, summary = surface.picks, surface.summary
        facts["lexical"] = {"absent": absent}
    if coverage is not None:
        facts["lexical"]["coverage"] = coverage.to_json()
    with atomic_path(out / "picks.parquet") as tmp:
        picks.to_parquet(tmp, index=False)
    write_csv(out / "summary.csv", summary)
    write_text(out / "facts.json", json.dumps(facts, ensure_ascii=False, indent=2, default=float) + "\n")
    return summary


def main() -> None:
    def body(config: Config) -> None:
        summary = build_baselines(config)
        log.info("\n%s", summary[["strategy", "n", "accuracy", "ci_low", "ci_high"]].to_string(index=False))

    run_stage("baselines", body)


if __name__ == "__main__":
    main()
