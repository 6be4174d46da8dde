"""The audit report (``blindmcq audit``'s ``report.md``, ``index.html``, ``metrics.json``) built from
imported predictions instead of a probe run here.

The same steps as ``auditing.audit.run_audit`` after its probe, over the same functions: the surface
strategies and lexical search on the bank, its profile, the gate of the imported model over the 2N
orders, the analysis on the published order, the tables and the item explorer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from blindmcq.analysis.frame import Baseline
from blindmcq.analysis.gate import write_gate
from blindmcq.analysis.tables import write_tables
from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import atomic_path, write_text
from blindmcq.auditing.audit import (
    STATUTES,
    AuditResult,
    audit_markdown,
    audit_metrics,
    bank_language,
    check_out_dir,
    gate_and_tables,
    gate_description,
    lexical_strategy,
)
from blindmcq.auditing.profile import profile_bank
from blindmcq.auditing.surface import summarise, surface_strategies
from blindmcq.config.schema import Config, default
from blindmcq.datasets.items import Item, write_items
from blindmcq.errors import InputError


def audit_imported(
    items: Sequence[Item],
    predictions: pd.DataFrame,
    out: Path,
    *,
    source: str,
    gate_k: int | None = None,
    statutes: Path = STATUTES,
    seed: int = default(Config, "seed"),
    key_labels: Sequence[str] = (),
) -> AuditResult:
    """Write the audit report of ``items`` (the exported bank) for the one model in ``predictions``;
    ``key_labels`` (the export manifest's): the bank's own label of each slot, which name its slots."""
    from blindmcq.analysis.figures import figure_1, figure_2, save
    from blindmcq.reporting.html import write_html_report

    out = Path(out)
    check_out_dir(out)
    models = sorted(set(predictions["model"].astype(str)))
    if len(models) != 1:
        raise InputError(f"the audit report reads one model's predictions, got {models}", file=source)
    known = {item.id for item in items}
    unknown = sorted(set(predictions["item_id"].astype(str)) - known)
    if unknown:
        raise InputError(
            f"{len(unknown)} predicted items are not in the bank (first: {unknown[0]})", file=source
        )
    usable = [item for item in items if item.usable]
    warnings: list[str] = []
    profile = profile_bank(list(items))
    surface = surface_strategies(list(items), seed, profile)
    picks = surface.picks
    language = bank_language(list(items))
    lexical, lexical_note = lexical_strategy(list(items), language, statutes, seed)  # as blindmcq audit
    if lexical is not None:
        picks = pd.concat([picks, lexical], ignore_index=True, join="inner")
    else:
        warnings.append(lexical_note)
    summary = summarise(picks, n_usable=len(usable), n_skipped=surface.n_skipped)
    first = predictions.iloc[0]
    base = Baseline(phrasing=str(first["phrasing"]), labels=str(first["labels"]),
                    protocol=str(first["protocol"]), reasoning=str(first["reasoning"]))  # fmt: skip
    model = models[0]
    labels = list(key_labels)
    g, analysis, tables = gate_and_tables(
        predictions, gate_model=model, gate_k=gate_k, base=base, picks=picks, items=items, slot_labels=labels
    )

    write_items(out / "items.jsonl", items)
    write_predictions(predictions, out / "predictions.parquet")
    write_gate(out / "gate.json", g)
    with atomic_path(out / "baselines" / "picks.parquet") as tmp:
        picks.to_parquet(tmp, index=False)
    write_tables(out / "tables", tables)
    save(figure_1(analysis.gate), out / "figures" / "figure1.png")
    save(figure_2(analysis), out / "figures" / "figure2.png")
    metrics = audit_metrics(analysis, summary, profile, model)
    probed = predictions["item_id"].nunique()
    settings = {
        "file": source,
        "items": f"{len(items)} ({len(usable)} usable)",
        "language (script)": language,
        "lexical search": lexical_note,
        "model": f"{model} (imported: {', '.join(sorted(set(predictions['backend'].astype(str))))})",
        "probed items": str(probed),
        "prompt": base.phrasing,
        "gate": gate_description(g, gate_k),
    }
    result = AuditResult(
        list(items), summary, profile, analysis, g, metrics, warnings, settings, key_labels=labels
    )
    write_text(out / "report.md", audit_markdown(result, tables))
    write_html_report(
        out, items_path=out / "items.jsonl", predictions_path=out / "predictions.parquet",
        gate_path=out / "gate.json", baselines_dir=out / "baselines", analysis_dir=out,
        title=f"blindmcq audit: {Path(source).name} (imported)",
    )  # fmt: skip
    write_text(out / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    return result
