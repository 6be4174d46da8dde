"""Predictions + gate + baselines of one project folder -> every table (CSV, Markdown), figure and metric.

The ``analyze`` stage calls :func:`run_analysis` on the project it runs in, the release bundle on the
scratch copy of a release folder; both name the folder (``root``) instead of changing directory. Outputs
in ``out_dir`` (default ``root/results/analysis``): ``tables/`` (Tables 2-10 and the gate, each ``.csv``
and ``.md``), ``figures/`` (Figures 1-4, PNG), ``metrics.json`` (the same numbers, rounded as the tables
show them; the probed model's under model-free names, the panel's under ``panel/<name>/``) and
``findings.md`` (the report's opening sentences, generated from the numbers).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from blindmcq import paths
from blindmcq.analysis.figures import write_figures
from blindmcq.analysis.findings import findings
from blindmcq.analysis.frame import baseline_from_params, check_item_ids, read_analysis_frame
from blindmcq.analysis.gate import read_gate
from blindmcq.analysis.leaks import leak_metrics, lexical_beyond_length
from blindmcq.analysis.metrics import analyze, bank_blind_accuracy
from blindmcq.analysis.tables import build_tables, headline_metrics, write_tables
from blindmcq.analysis.verdict import bank_verdict, key_counts_of
from blindmcq.atomic import write_text
from blindmcq.config.schema import Analysis, Config
from blindmcq.datasets.items import read_items
from blindmcq.datasets.registry import DatasetConfig, bank_key_labels


def load_all_predictions(
    extra: list[str], item_ids: set[str] | None = None, *, root: Path = Path(".")
) -> pd.DataFrame:
    """The predictions of the project at ``root``, the gate's own and the ``extra`` files (paths relative
    to ``root``); an extra file must answer only items of the run's corpus (``item_ids``,
    ``check_item_ids``)."""
    parts = [root / paths.PREDICTIONS]
    gate_predictions = root / paths.GATE_DIR / "predictions.parquet"
    if gate_predictions.exists():
        parts.append(gate_predictions)
    frames = [read_analysis_frame(p) for p in parts]
    for path in extra:
        frame = read_analysis_frame(root / path)
        if item_ids is not None:
            check_item_ids(frame, item_ids, source=str(path), corpus=f"the run's corpus ({paths.ITEMS})")
        frames.append(frame)
    combined = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    for col in combined.columns:  # categories differ between files; re-unify them
        if isinstance(frames[0][col].dtype, pd.CategoricalDtype):
            combined[col] = _unified(frames, col)
    return combined


def _unified(frames: list[pd.DataFrame], col: str) -> pd.Categorical:
    """The categorical column ``col`` of the frames one below the other, as ``astype(str).astype(
    "category")`` makes it (the values seen as strings, sorted), built from the codes: converting every
    row to a string and back took most of the load at paper scale."""
    cats = [f[col].astype("category").cat for f in frames]
    if any((c.codes < 0).any() for c in cats):  # a missing label becomes the string "nan" that way
        return pd.concat([f[col] for f in frames], ignore_index=True).astype(str).astype("category").array
    seen = [c.remove_unused_categories().cat.categories.astype(str) for c in cats]
    # the same conversion applied to the distinct values gives the same categories in the same order
    target = pd.Series(pd.Index(seen[0]).append(seen[1:]).unique()).astype(str).astype("category").cat
    codes = []
    for c in cats:
        mapping = target.categories.get_indexer(c.categories.astype(str))
        old = c.codes.to_numpy()
        codes.append(np.where(old >= 0, mapping[old], -1))
    return pd.Categorical.from_codes(np.concatenate(codes), dtype=pd.CategoricalDtype(target.categories))


def run_analysis(config: Config, *, root: Path = Path("."), out_dir: Path | None = None) -> dict[str, float]:
    """Analyse the pipeline outputs under ``root`` (a project folder: ``results/corpus``, ``predictions``,
    ``gate``, ``baselines``) with the typed composed config; write into ``out_dir``; return the metrics
    written to ``metrics.json``."""
    out_dir = root / paths.ANALYSIS_DIR if out_dir is None else out_dir
    cfg: Analysis = config.group("analysis")
    dataset: DatasetConfig = config.group("dataset")
    items = read_items(root / paths.ITEMS)
    predictions = load_all_predictions(list(cfg.extra_predictions), {item.id for item in items}, root=root)
    gate = read_gate(root / paths.GATE_DIR / "gate.json")
    baselines = pd.read_parquet(root / paths.BASELINES_DIR / "picks.parquet")
    base = baseline_from_params(config, orders=cfg.headline_orders)
    bank = dataset.name
    banks, bank_predictions = {bank: items}, {bank: predictions}
    second = cfg.second_bank
    second_predictions = None
    if second.predictions:  # Table 10 and Figure 4: another bank's predictions (and items)
        name = second.name or "second bank"
        second_predictions = bank_predictions[name] = read_analysis_frame(root / second.predictions)
        if second.items:
            banks[name] = read_items(root / second.items)
    manifest_path = root / paths.PREDICTIONS_DIR / "models.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    # the gate model selected the items; option-only models answer blind and full alike by construction
    exclude = [*([gate.gate_model] if gate is not None else []), *(manifest.get("option_only") or [])]
    analysis = analyze(
        predictions,
        gate=gate,
        correlation_exclude=exclude,
        base=base,
        sample_sizes=list(cfg.sample_sizes),
        seed=cfg.seed,
        second_bank=second_predictions,
        failed_calls=cfg.failed_calls,
    )
    facts_path = root / paths.BASELINES_DIR / "facts.json"
    facts = json.loads(facts_path.read_text(encoding="utf-8")) if facts_path.exists() else {}
    # why lexical search was not run on this bank (statutes/language.py): the baselines or the panel say
    absent = (facts.get("lexical") or {}).get("absent") or next(
        iter((manifest.get("absent") or {}).values()), None
    )
    # slots named for a reader by the bank's own labels (the default bank's А, Б, В, Г)
    labels = bank_key_labels(dataset, max((it.n_options for it in items), default=0))
    tables = build_tables(
        analysis, baselines=baselines, items=items, lexical_absent=absent, slot_labels=labels
    )
    write_tables(out_dir / "tables", tables)
    write_figures(
        out_dir / "figures", analysis, banks=banks, bank_accuracy=bank_blind_accuracy(bank_predictions, base)
    )
    model = str(manifest.get("model") or config.group("model").name)
    # the probed model under model-free names, every other model under panel/<name>/ (tables.metric_key)
    metrics = headline_metrics(analysis, model=model)
    metrics |= leak_metrics(tables["surface_gate"].frame, lexical_beyond_length(baselines))
    write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    surface = pd.read_csv(root / paths.BASELINES_DIR / "summary.csv")  # Table 2: the bank's own evidence
    opening = findings(
        analysis,
        bank=bank_verdict(surface, key_counts_of(items)),
        model=model,
        labels=manifest.get("models") or {},
        variants=manifest.get("scoring_variants") or [],
        surface_gate=tables["surface_gate"].frame,
        absent=absent,
    )
    write_text(out_dir / "findings.md", "\n".join(opening) + "\n")
    return metrics
