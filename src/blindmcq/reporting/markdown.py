"""The report folder of one run: Markdown with every table and figure, and the headline metrics.

Reads only what earlier steps wrote (corpus verification, baselines, analysis tables/figures/metrics).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.analysis.tables import bank_slot, facts_figures, summary_figures
from blindmcq.atomic import replace_tree, write_text
from blindmcq.config.schema import Config
from blindmcq.datasets.registry import bank_key_labels
from blindmcq.errors import InputError
from blindmcq.secrets import scrub_text

FIGURE_CAPTIONS = {
    "figure1": "Figure 1: how often each item is answered blind over the 2N orders, against two "
    "pickers that read nothing: one redrawing in each order (Binomial(2N, 1/N)) and one picking the same "
    "option in every order (1/N of the items at all orders).",
    "figure2": "Figure 2: blind against full accuracy per model, 95% Wilson intervals.",
    "figure3": "Figure 3: blind accuracy with the key forced into each slot (bars) against the pick rate.",
    "figure4": "Figure 4: option-length distribution of the bank(s) and blind accuracy per bank.",
}


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise InputError("expected output of an earlier stage is missing", file=str(path))
    return json.loads(path.read_text(encoding="utf-8"))


def run_summary(cfg: Config) -> list[str]:
    """The settings table the report opens with, from the typed config, each line scrubbed of registered
    secrets. A group left out of the config shows nothing; with no ``gate`` or ``probe`` group the
    threshold and the seed read "None"."""
    groups = [
        ("dataset", cfg.dataset), ("model", cfg.model), ("gate_model", cfg.gate_model),
        ("prompt", cfg.prompt), ("labels", cfg.labels), ("condition", cfg.condition),
        ("protocol", cfg.protocol), ("reasoning", cfg.reasoning),
    ]  # fmt: skip
    lines = [f"| {key} | {group.name} |" for key, group in groups if group is not None]
    if cfg.panel is not None and cfg.panel.models:
        lines.insert(2, f"| panel | {', '.join(map(str, cfg.panel.models))} |")
    k = cfg.gate.k if cfg.gate is not None else None
    if k is not None:
        lines.append(f"| gate k | {k} of 2N orders |")
    else:  # k chosen per N (analysis.gate.thresholds_for)
        rate = cfg.gate.false_rejection if cfg.gate is not None else None
        lines.append(f"| gate k | per N, false-rejection rate {rate} under chance |")
    sample, seed = (cfg.probe.sample, cfg.probe.seed) if cfg.probe is not None else (None, None)
    lines.append(f"| probe sample | {sample or 'every usable item'} (seed {seed}) |")
    return ["| setting | value |", "|---|---|", *(scrub_text(line) for line in lines)]


def corpus_metrics(verification: Mapping[str, Any]) -> dict[str, float]:
    """Numeric corpus facts worth tracking (counts and confirmation rates)."""
    out: dict[str, float] = {}
    for key, value in verification.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            out[f"corpus/{key}"] = float(value)
        elif isinstance(value, Mapping) and key in ("confirmation", "confirmed", "rates", "counts", "status"):
            for sub, v in value.items():
                if isinstance(v, int | float) and not isinstance(v, bool):
                    out[f"corpus/{key}/{sub}"] = float(v)
    return out


def interventions_section(root: Path) -> list[str]:
    """The repairs (distractor rewriting, AnswerPool) measured on the same items, where they were run."""
    parts = [
        (root / name / "comparison.md").read_text(encoding="utf-8")
        for name in ("rewrite", "answerpool")
        if (root / name / "comparison.md").exists()
    ]
    return ["## Interventions", "", *parts, ""] if parts else []


# The figures of ``reports/metrics.json`` that no model score reaches: the corpus's, and those of the
# option-only strategies on all items (Table 2, the bank's lengths, lexical search beyond length), all
# read from the corpus and baselines stages. Every other figure rests on a model's picks or scores, so
# another machine's run may put it within ``backends.base.SCORE_FIGURE_TOLERANCE`` (docs/cache.md).
MODEL_FREE_FIGURES = ("corpus/", "bank/", "table2/", "lexical_beyond_length/")

# The headline figures (``reports/headline.json``): short names, so that the README's ``dvc exp show``
# fits them beside what was swept in 110 columns; every figure is also in ``reports/metrics.json``.
HEADLINE = {
    "blind": "blind_acc/all",  # the probed model's blind accuracy, published order, all probed items
    "excess": "excess/all",  # its blind accuracy beyond its position habit
    "rejected": "gate/n_rejected",  # items the gate model answers blind (k of 2N orders)
    "longest": "table2/longest",  # Table 2, all items: the longest option is the key (ties 1/k)
    "lexical": "table2/lexical_search",  # Table 2: BM25 over the statutes picks the key
}


def headline_figures(metrics: Mapping[str, float]) -> dict[str, float]:
    """The few figures ``dvc exp show`` and the MLflow parents' table show per run (``HEADLINE``), in
    its order; a figure the run lacks (no gate) is left out."""
    return {short: metrics[key] for short, key in HEADLINE.items() if key in metrics}


def build_report(
    *,
    corpus_dir: Path,
    baselines_dir: Path,
    analysis_dir: Path,
    out_dir: Path,
    config: Config,
    interventions_dir: Path = Path("results/interventions"),
) -> dict[str, float]:
    """Write ``out_dir/report.md``, ``tables/``, ``figures/``, ``metrics.json`` (every figure) and
    ``headline.json`` (``headline_figures``); return the metrics. ``config``: the typed config, the settings
    table's source (``run_summary``)."""
    verification = _read_json(corpus_dir / "verification.json")
    facts = _read_json(baselines_dir / "facts.json")
    metrics = {k: float(v) for k, v in _read_json(analysis_dir / "metrics.json").items()}
    summary = pd.read_csv(baselines_dir / "summary.csv")
    metrics |= summary_figures(summary)
    metrics |= facts_figures(facts)
    metrics |= corpus_metrics(verification)
    for name in ("rewrite", "answerpool"):
        path = interventions_dir / name / "metrics.json"
        if path.exists():
            flat = json.loads(path.read_text(encoding="utf-8"))
            metrics |= {f"{name}/{k}": float(v) for k, v in flat.items() if isinstance(v, int | float)}

    for sub in ("tables", "figures"):  # swapped in whole: a failed copy keeps the old folder
        replace_tree(analysis_dir / sub, out_dir / sub)

    shares = facts.get("key_slot_shares") or []
    counts = facts.get("key_slot_counts") or []
    labels = bank_key_labels(config.dataset, len(shares)) if config.dataset is not None else []
    # by position and the bank's own label, each slot's count before its share: "slot 2 (Б) 73 (0.215)"
    slot_shares = ", ".join(
        f"slot {bank_slot(s, labels)}{f' {int(counts[s])}' if s < len(counts) else ''} ({float(v):.3f})"
        for s, v in enumerate(shares)
    )
    diff = float(facts["key_minus_distractor_chars"])
    key_mean, distractor_mean = float(facts["key_chars_mean"]), float(facts["distractor_chars_mean"])
    opening = analysis_dir / "findings.md"
    lines = [
        "# blindmcq report",
        "",
        *(
            ["## What this run shows", "", opening.read_text(encoding="utf-8").strip(), ""]
            if opening.exists()
            else []
        ),
        *run_summary(config),
        "",
        "## Corpus",
        "",
        f"Items: {verification.get('n_items', '?')}. Verification: `results/corpus/verification.json`.",
        "",
        "## The bank",
        "",
        "Key-position shares (usable items, each slot's count before its share; slot 1 is the first option "
        "as published"
        + ("; in brackets, the label the bank gives it" if labels else "")
        + "): "
        + slot_shares
        + ".",
        "",
        f"Mean key length minus mean distractor length: {diff:+.1f} characters "
        f"(key {key_mean:.1f}, distractors {distractor_mean:.1f}).",
        "",
        (analysis_dir / "tables" / "tables.md").read_text(encoding="utf-8"),
        "",
        *interventions_section(interventions_dir),
        "## Figures",
        "",
    ]
    for name, caption in FIGURE_CAPTIONS.items():
        if (out_dir / "figures" / f"{name}.png").exists():
            lines += [f"![{caption}](figures/{name}.png)", "", caption, ""]
    write_text(out_dir / "report.md", "\n".join(lines) + "\n")
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    write_text(out_dir / "headline.json", json.dumps(headline_figures(metrics), indent=2) + "\n")
    return metrics
