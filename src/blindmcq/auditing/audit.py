"""``blindmcq audit FILE --out DIR``: audit any multiple-choice bank in one command.

From a bank in any file the generic loader reads (CSV/TSV with or without a header, JSONL, Parquet, XLSX,
a ``datasets`` save_to_disk folder), or a dataset config (``dataset=NAME``), it writes, under ``DIR`` only:

- ``report.md``: what the audit shows, the surface strategies (paper Table 2) with 95% Wilson intervals,
  key-position shares, the option-length profile, and the blind probe and gate of the chosen model;
- ``index.html``: the item explorer (:mod:`blindmcq.reporting.html`);
- ``metrics.json``: flat keys as in ``reports/metrics.json`` (``table2/longest``, ``blind_acc/all``).

Intermediate files the explorer reads (``items.jsonl``, ``predictions.parquet``, ``gate.json``,
``baselines/``, ``tables/``, ``figures/``) and the response cache (``cache/``) sit in ``DIR`` too. Every
file is written atomically; nothing outside ``DIR`` is written (no ``results/``, no ``data/``, no MLflow).

The mapping: ``--no-header`` numbers columns from 0, and whatever of ``--question/--options/--key``
is not given follows MMLU's layout (question first, answer letter last, the options between, key format
``label``); with a header, what is not given is guessed (``datasets.generic.guess_mapping``) and the guess
is said in one line. A wrong mapping stops with one line naming the column and what it holds (exit 2).
``--model none`` (or ``--surface-only``) probes nothing and needs no labels; ``--labels`` picks the probe's
scheme, which goes on past its symbols as it declares (``extend``).

Language and coverage: the lexical baseline searches the statutes only when they are in the bank's
language, declared or detected (``statutes.language``), and counts as a strategy only where the statutes
cover the bank (``statutes.coverage``: the options match provisions more than random words do); otherwise
the report says, in one sentence, that it was left out and why, and it joins neither Table 2 nor the Holm
family of the option-text strategies. The sentence also counts the items that match no statute.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.analysis.frame import Baseline
from blindmcq.analysis.gate import GateResult, gate, gate_nulls, write_gate
from blindmcq.analysis.metrics import Analysis, analyze
from blindmcq.analysis.tables import (
    bank_profile,
    bank_slot,
    build_tables,
    facts_figures,
    fmt,
    fmt_ci,
    headline_metrics,
    rounded,
    slot_name,
    summary_figures,
    table_2,
    write_tables,
)
from blindmcq.analysis.verdict import bank_verdict, key_counts_of
from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import atomic_path, write_text
from blindmcq.auditing.profile import profile_bank
from blindmcq.auditing.surface import lexical_picks as picks_of_lexical
from blindmcq.auditing.surface import summarise, surface_strategies
from blindmcq.config.files import REPO_ROOT, Groups
from blindmcq.config.schema import (
    Condition,
    Config,
    GenericDataset,
    LocalModel,
    ModelSchema,
    default,
)
from blindmcq.datasets.generic import bank_format, guess_mapping, load_generic, peek, slot_labels
from blindmcq.datasets.items import Item, skipped_sentence
from blindmcq.datasets.registry import DatasetConfig
from blindmcq.errors import ConfigError, InputError
from blindmcq.labels import label_strings
from blindmcq.statutes.coverage import Coverage
from blindmcq.statutes.language import STATUTES_LANGUAGE, bank_language
from blindmcq.statutes.language import lexical_skip_reason as language_skip_reason
from blindmcq.vocabulary import CONDITIONS, HEADERLESS_FORMATS, PUBLISHED_ORDER

log = logging.getLogger(__name__)

ROOT = REPO_ROOT
DEFAULT_MODEL = "longest"  # a heuristic: the audit runs in seconds without any model download
STATUTES = ROOT / "defaults" / "statutes" / "provisions-default.jsonl"
LEXICAL_CHUNK = 20_000  # items searched at once by the audit's lexical strategy (bounds its memory)
AUDIT_GROUPS = ("prompt", "labels", "reasoning", "protocol")  # the config groups an audit picks from
PROMPT_BY_LANGUAGE = {"uk": "original"}  # any other language gets the English instruction
REPORT_TABLES = ("gate", "table2", "bank_profile", "table3", "table4")
FIGURES = {
    "figure1": "Figure 1: how often each item is answered blind over the 2N orders, against two "
    "pickers that read nothing: one redrawing in each order (Binomial(2N, 1/N)) and one picking the same "
    "option in every order (1/N of the items at all orders).",
    "figure2": "Figure 2: blind against full accuracy per model, 95% Wilson intervals.",
}


AUDIT_ROLES = {"question": "--question", "options": "--options", "key": "--key", "key_format": "--key-format"}


@dataclass
class Mapping:
    """Which columns hold what; ``header=False`` means columns are named "0", "1", ... by position."""

    header: bool = default(GenericDataset, "header")
    question: str | None = None
    options: list[str] = field(default_factory=list)
    key: str | None = None
    key_format: str | None = None
    duplicates: str = default(GenericDataset, "duplicates")  # a row repeating an earlier item: drop | keep

    def guess(
        self, columns: Sequence[str], records: Sequence[dict[str, Any]] = (), file: str | None = None
    ) -> tuple[dict[str, Any], str]:
        """Arguments for ``load_generic``, what was not given guessed from the file (``guess_mapping``),
        and the one line saying what was guessed ("" when nothing was)."""
        return guess_mapping(
            columns, records, header=self.header, question=self.question, options=self.options, key=self.key,
            key_format=self.key_format, file=file, roles=AUDIT_ROLES,
        )  # fmt: skip


def read_bank(
    path: Path, mapping: Mapping, notes: list[str] | None = None, labels: list[str] | None = None
) -> tuple[list[Item], str, str]:
    """The items of a bank file, the mapping read (for the settings) and the guess note ("" if none);
    what the loader says about the rows (repeated items) is appended to ``notes``, and the labels the
    bank's keys are written in (``key_labels``), one per slot, to ``labels``."""
    fmt = bank_format(path)
    if not path.exists():
        raise InputError("bank file not found", file=str(path))
    if not mapping.header and fmt not in HEADERLESS_FORMATS:
        raise ConfigError(
            "--no-header", f"only {'/'.join(HEADERLESS_FORMATS)} can lack a header; {path.name} is {fmt}"
        )
    columns, records = peek(path, fmt, mapping.header)
    if not records:
        raise InputError("the bank has no items", file=str(path))
    kwargs, note = mapping.guess(columns, records, str(path))
    items = load_generic(
        path, source="audit", header=mapping.header, format=fmt, duplicates=mapping.duplicates, notes=notes,
        **kwargs,
    )  # fmt: skip
    check_question_column(items, kwargs["question"], str(path))
    if labels is not None:
        labels += key_labels(kwargs, records, max((it.n_options for it in items), default=0))
    described = ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ("" if mapping.header else ", no header")
    return items, f"{fmt}: {described}", note


def key_labels(kwargs: dict[str, Any], records: Sequence[dict[str, Any]], n: int) -> list[str]:
    """The bank's own label of each of ``n`` slots (``datasets.generic.slot_labels``): the mapping's
    ``labels``, else the script of the first key read; none (slots by position) unless keys are labels."""
    keys = [r.get(kwargs.get("key")) for r in records]
    written = [str(k).strip() for k in keys if k is not None and str(k).strip()]
    return slot_labels(kwargs.get("key_format"), kwargs.get("labels"), written[0] if written else None, n)


def check_question_column(items: Sequence[Item], column: str, file: str) -> None:
    """A question column that holds only labels or numbers is a swapped mapping, not a bank."""
    stems = [item.question.strip() for item in items]
    if stems and all(len(s) <= 2 for s in stems):
        raise InputError(
            f"column {column!r} (--question) holds {stems[0]!r}-like short codes in every row, not questions",
            file=file,
        )


def lexical_skip_reason(language: str, statutes: Path) -> str | None:
    """Why lexical search over ``statutes`` is not run on a bank in ``language`` (None: it runs)."""
    reason = language_skip_reason(language, STATUTES_LANGUAGE, statutes.name)
    if reason is None and not statutes.exists():
        return f"Lexical search skipped: no statutes file at {statutes}."
    return reason


def lexical_picks(
    items: Sequence[Item], statutes: Path, seed: int, words: Sequence[str] | None = None
) -> tuple[pd.DataFrame, Coverage | None]:
    """Lexical search over the statutes as Table 2 pick rows (the baselines stage's columns), and the
    statutes' coverage of the bank against random ``words`` (``statutes.coverage``; None: not measured,
    no word list for the language)."""
    from blindmcq.statutes.corpus import read_provisions
    from blindmcq.statutes.coverage import statute_coverage
    from blindmcq.statutes.index import build_index
    from blindmcq.statutes.lexical import lexical_search
    from blindmcq.statutes.text import Analyzer, TextConfig

    text = TextConfig()
    analyzer = Analyzer(text)
    index = build_index(read_provisions(statutes), text, analyzer=analyzer)
    # searched LEXICAL_CHUNK items at a time, keeping only the pick columns: a whole bank's search rows
    # (token lists, scores, snippets per item) held a million-item bank's gigabytes. A pick depends on
    # its item alone (its ties broken by its id), so the chunks' picks are the whole search's.
    parts = [
        picks_of_lexical(lexical_search(items[start : start + LEXICAL_CHUNK], index, analyzer, seed=seed))
        for start in range(0, len(items), LEXICAL_CHUNK)
    ]
    kept = [part for part in parts if not part.empty] or parts[:1]
    picks = pd.concat(kept, ignore_index=True) if len(kept) > 1 else kept[0].reset_index(drop=True)
    coverage = None if words is None else statute_coverage(items, index, analyzer, words, seed=seed)
    return picks, coverage


def lexical_strategy(
    items: Sequence[Item], language: str, statutes: Path, seed: int
) -> tuple[pd.DataFrame | None, str]:
    """Lexical search's Table 2 pick rows where it applies (the statutes in the bank's language and
    covering it), else None; and the one sentence the report gives about it either way."""
    skipped = lexical_skip_reason(language, statutes)
    if skipped is not None:
        return None, skipped
    from blindmcq.statutes.coverage import null_words

    lexical, coverage = lexical_picks(items, statutes, seed, null_words(language))
    if coverage is None:
        return lexical, f"Statute coverage not measured (no random-word list for '{language}')."
    # a bank the statutes do not cover: out of Table 2 and so of the Holm family of its strategies
    return (lexical if coverage.applies else None), coverage.sentence()


@dataclass
class AuditResult:
    items: list[Item]
    summary: pd.DataFrame
    profile: dict[str, Any]
    analysis: Analysis | None  # None: a surface-only audit (no model)
    gate: GateResult | None
    metrics: dict[str, float]
    warnings: list[str]
    settings: dict[str, str]
    cloze: pd.DataFrame | None = None
    key_labels: list[str] = field(default_factory=list)  # the bank's label of each slot (none: positions)


def _probe(
    items: list[Item],
    model_cfg: ModelSchema,
    prompt_name: str,
    cache: Path,
    backend: Any,
    configs: Groups,
    labels: str,
    description: Any = None,
) -> pd.DataFrame:
    from blindmcq.tasks.presentations import for_bank
    from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe

    return run_probe(
        items,
        model_cfg=model_cfg,
        setup=PresentationSetup(
            # the bank named by its dataset config's words, else the phrasing's neutral ones
            prompt=for_bank(configs.option("prompt", prompt_name), description),
            labels=configs.option("labels", labels),
            # conf/config.yaml's reasoning and protocol: the headline presentation Baseline() selects
            reasoning=configs.option("reasoning", configs.default("reasoning")),
            condition=Condition(name="audit"),  # the schema's: both conditions, 2N blind orders
            protocol=configs.option("protocol", configs.default("protocol")),
            schemes=configs.options["labels"],
        ),
        # a model's calls take minutes: the bar (stderr) shows they are moving
        engine=EngineSettings(cache, progress=True),
        backend=backend,
    )


CLOZE_NORMS = {
    "logprob": "raw (lm-eval acc)",
    "per_token": "per token",
    "per_char": "per character (acc_norm)",
}


def cloze_accuracy(backend: Any, items: Sequence[Item], answer_cue: str) -> pd.DataFrame:
    """Cloze accuracy per normalisation and condition: each option's text scored after the question
    (full) or after the answer cue alone (blind), in published order (the score is position-free).
    An exact tie at the top counts as wrong, as the parser's ``tie`` does."""
    from tqdm.auto import tqdm

    from blindmcq.stats import wilson

    rows = []
    for condition in CONDITIONS:
        hits = dict.fromkeys(CLOZE_NORMS, 0)
        for item in tqdm(items, desc=f"cloze {condition}", unit="item"):  # a forward pass per option
            context = backend.cloze_context(item.question if condition == "full" else None, answer_cue)
            scores = backend.cloze_scores(context, list(item.options))
            for norm in CLOZE_NORMS:
                values = [sc[norm] for sc in scores]
                best = max(values)
                hits[norm] += values.count(best) == 1 and values.index(best) == item.key
        for norm, label in CLOZE_NORMS.items():
            lo, hi = wilson(hits[norm], len(items))
            n = len(items)
            rows.append({"condition": condition, "norm": norm, "label": label, "n": n, "k": hits[norm],
                         "acc": hits[norm] / n, "lo": lo, "hi": hi})  # fmt: skip
    return pd.DataFrame(rows)


def check_out_dir(out: Path) -> None:
    """``--out`` must be a folder, or a path where one can be made: one line naming it otherwise."""
    for part in (out, *out.parents):
        if part.exists():
            if not part.is_dir():
                what = "names a file, not a folder" if part == out else f"{part} is a file, not a folder"
                raise InputError(f"--out {what}", file=str(out))
            if not os.access(part, os.W_OK | os.X_OK):
                raise InputError(f"{part} is not writable", file=str(out))
            return


def run_audit(
    path: str | Path,
    out: str | Path,
    mapping: Mapping,
    *,
    model: ModelSchema | None,
    configs: Groups,
    prompt: str | None = None,
    gate_k: int | None = None,
    statutes: Path = STATUTES,
    seed: int = default(Config, "seed"),
    scoring: str | None = None,
    sample: int | None = None,
    labels: str | None = None,
    dataset: DatasetConfig | None = None,
    language: str | None = None,
) -> AuditResult:
    """Read the bank, measure it, and write ``report.md``, ``index.html``, ``metrics.json`` under ``out``.

    ``model`` is the model's typed config (None: surface-only, no probe, no labels needed); ``configs`` the
    prompt, labels, reasoning and protocol options (``AUDIT_GROUPS``), both read by the command line.
    ``dataset`` (a dataset config, ``dataset_config``) reads the bank as the pipeline would, instead of
    ``path`` with ``mapping``. ``labels`` names the label scheme (default conf/config.yaml's).
    ``language`` declares the bank's language (else the dataset config's ``language``, else the script)."""
    from blindmcq.datasets.items import write_items
    from blindmcq.reporting.html import write_html_report

    path, out = Path(path), Path(out)
    check_out_dir(out)
    if gate_k is not None and gate_k < 1:
        raise ConfigError("--gate-k", f"must be at least 1 (an item solved in k of its orders), got {gate_k}")
    warnings: list[str] = []
    own_labels: list[str] = []  # the labels the bank's keys are written in, one per slot (none: positions)
    if dataset is not None:
        from blindmcq.datasets.registry import bank_key_labels, load_dataset

        items = load_dataset(dataset, root=ROOT)
        described = f"dataset config {dataset.name} (loader {dataset.loader}, {dataset.path})"
        own_labels += bank_key_labels(dataset, max((it.n_options for it in items), default=0), root=ROOT)
        language = language or dataset.language
    else:
        notes: list[str] = []
        items, described, note = read_bank(path, mapping, notes, own_labels)
        if note:
            warnings.append(f"Columns {note}.")
        warnings += [f"{n[0].upper()}{n[1:]}." for n in notes]
    if not items:
        raise InputError("the bank has no items", file=str(path))
    usable = [item for item in items if item.usable]
    if not usable:
        raise InputError("no usable item (every item is malformed); see the flags", file=str(path))
    n_bad = len(items) - len(usable)
    if n_bad:
        warnings.append(skipped_sentence(items))

    profile = profile_bank(items)
    surface = surface_strategies(items, seed, profile)
    picks = surface.picks
    language, how = (language, "declared") if language else (bank_language(items), "detected from the script")
    lexical, lexical_note = lexical_strategy(items, language, statutes, seed)
    if lexical is not None:
        picks = pd.concat([picks, lexical], ignore_index=True, join="inner")
    else:
        warnings.append(lexical_note)
    summary = summarise(picks, n_usable=len(usable), n_skipped=surface.n_skipped)
    settings = {
        "file": str(path),
        "mapping": described,
        "items": f"{len(items)} ({len(usable)} usable; N = {_n_range(usable)})",
        "language": f"{language} ({how})",
        "lexical search": lexical_note,
    }
    write_items(out / "items.jsonl", items)
    with atomic_path(out / "baselines" / "picks.parquet") as tmp:
        picks.to_parquet(tmp, index=False)

    if model is None:  # surface-only: what the options alone give away; no model, no labels
        tables = {
            "table2": table_2(picks, item_ids=None),
            "bank_profile": bank_profile(items, own_labels),
        }
        write_tables(out / "tables", tables)
        metrics = audit_metrics(None, summary, profile, "")
        settings["model"] = "none (surface-only: no probe, no gate, no labels)"
        result = AuditResult(
            items, summary, profile, None, None, metrics, warnings, settings, key_labels=own_labels
        )
        write_text(out / "report.md", audit_markdown(result, tables))
        write_text(out / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
        return result

    from blindmcq.backends.registry import make_backend
    from blindmcq.tasks.probe import sample_items

    label_name = labels or configs.default("labels")
    label_cfg = configs.option("labels", label_name)
    if label_cfg.uniform:
        raise ConfigError(
            "--labels", f"{label_name!r} is the Matched-and-Dashed dash; the audit probes with letters"
        )
    widest = max(item.n_options for item in usable)
    try:
        label_strings(label_cfg, widest)
    except ConfigError as exc:
        raise ConfigError("--labels", f"{label_name} cannot label a {widest}-option item: {exc}") from None
    model_cfg = model
    if scoring is not None:  # only a local model scores; no other backend's schema has the key
        if not isinstance(model, LocalModel):
            raise ConfigError("--scoring", f"only a local model scores; {model.name} is {model.backend}")
        model_cfg = replace(model, scoring=scoring)
    # the scoring used: the override, else the model's own (a local model's; other backends have none)
    scoring = scoring or (model.scoring if isinstance(model, LocalModel) else None)
    backend = make_backend(model_cfg)
    prompt_name = prompt or PROMPT_BY_LANGUAGE.get(language, "english")
    n_orders = 2 * widest  # the most orders any item has
    if gate_k is not None and gate_k > n_orders:
        raise ConfigError("--gate-k", f"must be at most {n_orders} (the number of orders), got {gate_k}")
    probed = sample_items(usable, sample, seed)
    description = dataset.description if dataset is not None else None
    predictions = _probe(
        probed, model_cfg, prompt_name, out / "cache" / "responses.sqlite", backend, configs, label_name,
        description,
    )  # fmt: skip
    cloze = None
    if scoring == "cloze":
        answer_cue = configs.option("prompt", prompt_name).answer_cue
        cloze = cloze_accuracy(backend, probed, str(answer_cue or ""))
    base = Baseline(phrasing=prompt_name, labels=label_name)  # protocol and reasoning: conf/'s, as probed
    model_name = model_cfg.name
    g, analysis, tables = gate_and_tables(
        predictions, gate_model=model_name, gate_k=gate_k, base=base, picks=picks, items=items,
        slot_labels=own_labels,
    )  # fmt: skip

    # files the explorer reads, then the three outputs; each written atomically
    write_predictions(predictions, out / "predictions.parquet")
    write_gate(out / "gate.json", g)
    write_tables(out / "tables", tables)
    _write_figures(out / "figures", analysis)

    metrics = audit_metrics(analysis, summary, profile, model_name)
    if cloze is not None:
        for row in cloze.itertuples():
            metrics[f"cloze_{row.condition}_acc/{row.norm}"] = rounded(row.acc)
    shown_scoring = scoring or default(LocalModel, "scoring")  # "letter" for a backend that has none
    settings |= {
        "model": f"{model_name} ({model_cfg.backend}, scoring {shown_scoring})",
        "labels": label_name,
        "probed items": f"{len(probed)}"
        + (f" (seeded sample, seed {seed})" if len(probed) < len(usable) else ""),
        "prompt": prompt_name,
        "gate": gate_description(g, gate_k),
    }
    result = AuditResult(
        items, summary, profile, analysis, g, metrics, warnings, settings, cloze, key_labels=own_labels
    )
    write_text(out / "report.md", audit_markdown(result, tables))
    write_html_report(
        out,
        items_path=out / "items.jsonl",
        predictions_path=out / "predictions.parquet",
        gate_path=out / "gate.json",
        baselines_dir=out / "baselines",
        analysis_dir=out,
        title=f"blindmcq audit: {path.name}",
        conclusions=conclusions_markdown(result),  # the same opening as report.md
        conclusions_title="What this audit shows",
    )
    ordered = {k: metrics[k] for k in sorted(metrics, key=natural_key)}  # constant_2 before constant_10
    write_text(out / "metrics.json", json.dumps(ordered, indent=2) + "\n")
    return result


def gate_and_tables(
    predictions: pd.DataFrame,
    *,
    gate_model: str,
    gate_k: int | None,
    base: Baseline,
    picks: pd.DataFrame,
    items: Sequence[Item],
    slot_labels: Sequence[str],
) -> tuple[GateResult, Analysis, dict[str, Any]]:
    """The audit's gate over every order (``gate_k`` None: the pipeline's per-N rule, each N its own k;
    2-option items cannot be rejected), the analysis at the published order, and the report's tables
    (``REPORT_TABLES``): what an audit of probed and of imported predictions both show."""
    g = gate(predictions, gate_model=gate_model, k=gate_k, orders="all", base=base)
    analysis = analyze(predictions, gate=g, base=replace(base, orders=[PUBLISHED_ORDER]))
    tables = build_tables(analysis, baselines=picks, items=list(items), slot_labels=list(slot_labels))
    return g, analysis, {name: tables[name] for name in REPORT_TABLES if name in tables}


def gate_description(g: GateResult, gate_k: int | None) -> str:
    """The report's line on the gate: its thresholds, and the rule that chose them where no k was given."""
    rule = " (per N, the smallest k with one-sided p <= 0.05 for a picker redrawing in each order)"
    return g.describe_thresholds() + (rule if gate_k is None else "")


def _n_range(items: Sequence[Item]) -> str:
    sizes = sorted({item.n_options for item in items})
    return str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}..{sizes[-1]}"


def natural_key(name: str) -> list[Any]:
    """Sort key reading runs of digits as numbers: ``table2/constant_2`` before ``table2/constant_10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def _write_figures(out: Path, analysis: Analysis) -> None:
    from blindmcq.analysis.figures import figure_1, figure_2, save

    save(figure_1(analysis.gate), out / "figure1.png")
    save(figure_2(analysis), out / "figure2.png")


def audit_metrics(
    analysis: Analysis | None, summary: pd.DataFrame, profile: dict[str, Any], model: str
) -> dict[str, float]:
    """The flat metrics: the analysis' headline keys under the names ``reports/metrics.json`` uses (the
    probed ``model``'s without its name: ``blind_acc/all``), ``table2/<strategy>`` and the bank's facts."""
    from blindmcq.reporting.tracking import comparable_metrics

    metrics = comparable_metrics(headline_metrics(analysis), model) if analysis is not None else {}
    metrics |= summary_figures(summary)
    metrics |= facts_figures(profile)
    for slot, share in enumerate(profile["key_slot_shares"]):
        metrics[f"bank/key_share/{slot_name(slot)}"] = rounded(float(share))
    metrics["bank/n_items"] = float(profile["n_items"])
    metrics["bank/n_usable"] = float(profile["n_usable"])
    return {k: v for k, v in metrics.items() if np.isfinite(v)}


def _conclusion(result: AuditResult) -> list[str]:
    """A few plain sentences: what the audit shows, each naming its test."""
    lines = bank_verdict(result.summary, key_counts_of(result.items))
    g = result.gate
    if g is None or result.analysis is None:  # surface-only
        return [
            *lines,
            "No model was probed (surface-only): run with --model NAME for the blind probe and gate.",
        ]
    model = g.gate_model
    rows = result.analysis.summary
    for set_name in ("all", "accepted"):
        row = rows[(rows["model"] == model) & (rows["set"] == set_name)]
        if row.empty:
            continue
        r = row.iloc[0]
        lines.append(
            f"On {'all probed items' if set_name == 'all' else 'the accepted set'} ({set_name}), `{model}` "
            f"answers blind {fmt_ci(r['blind_acc'], r['blind_lo'], r['blind_hi'])} on the published order "
            f"(habit {fmt(r.get('habit', float('nan')))}, excess {fmt(r.get('excess', float('nan')), True)})."
        )
    lines.append(
        f"The gate (`{model}`; {g.describe_thresholds()}) rejects {len(g.rejected)} of {len(g.counts)} items "
        f"and keeps {len(g.accepted)} ({fmt(g.retained_share)}): an item is rejected when `{model}` answers "
        "it blind in so many of its orders that a picker redrawing in each order reaches that count with "
        "p <= 0.05 (exact binomial per item, no multiplicity correction)."
        + (
            f" {len(g.untestable)} items cannot be rejected at that rate (too few options)."
            if g.untestable
            else ""
        )
        + f" {gate_nulls(g).sentence()}"
    )
    return lines


def cloze_markdown(result: AuditResult) -> list[str]:
    if result.cloze is None:
        return []
    c = result.cloze
    lines = [
        "### Cloze scoring: each option's text by its log-likelihood (position-free)",
        "",
        "| Normalisation | Blind | Full |",
        "|---|---|---|",
    ]
    for norm, label in CLOZE_NORMS.items():
        cells = []
        for condition in CONDITIONS:
            r = c[(c["norm"] == norm) & (c["condition"] == condition)].iloc[0]
            cells.append(f"{fmt_ci(r['acc'], r['lo'], r['hi'])} ({int(r['k'])}/{int(r['n'])})")
        lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "Blind scores each option after the answer cue alone, full after the question and the cue; the "
        "prompt's option list is not shown. An exact tie counts as wrong. 95% Wilson intervals. The "
        "probe above picks by the configured normalisation (`cloze_norm`).",
        "",
    ]
    return lines


def conclusions_markdown(result: AuditResult) -> str:
    """The body of report.md's "What this audit shows" (its bullets and warnings); index.html opens
    with it too."""
    lines = [f"- {line}" for line in _conclusion(result)]
    if result.warnings:
        lines += ["", *[f"> Warning: {w}" for w in result.warnings]]
    return "\n".join(lines)


def audit_markdown(result: AuditResult, tables: dict[str, Any]) -> str:
    p = result.profile
    # slots by position and by the bank's own label (А, Б, В, Г or 1, 2, 3), each with its count
    counts = p.get("key_slot_counts") or [0] * len(p["key_slot_shares"])
    shares = ", ".join(
        f"slot {bank_slot(s, result.key_labels)} {c} ({v:.3f})"
        for s, (c, v) in enumerate(zip(counts, p["key_slot_shares"], strict=True))
    )
    labelled = "; in brackets, the label the bank gives it" if result.key_labels else ""
    chars = p["option_chars"]
    lines = [
        f"# blindmcq audit: {Path(result.settings['file']).name}",
        "",
        "## What this audit shows",
        "",
        conclusions_markdown(result),
        "",
        "## Settings",
        "",
        "| setting | value |",
        "|---|---|",
        *[f"| {k} | {str(v).replace('|', '/')} |" for k, v in result.settings.items()],
        "",
        "## The bank",
        "",
        f"Key-position shares (usable items, each slot's count before its share; slot 1 is the first "
        f"option as published{labelled}): {shares}.",
        "",
        f"Option length (characters, whitespace-normalised, all {p['n_options_total']} options): "
        f"median {chars['q50']:.0f}, 10%-90% {chars['q10']:.0f}-{chars['q90']:.0f}, max {chars['max']:.0f}; "
        f"{p['share_options_longer']:.3f} of options are longer than {p['long_option_chars']} characters. "
        f"Options that point into the stem ('i and iii', 'none of the above'): {p['pointer_share']:.3f}.",
        "",
        f"Mean key length minus mean distractor length: {p['key_minus_distractor_chars']:+.1f} characters "
        f"(key {p['key_chars_mean']:.1f}, distractors {p['distractor_chars_mean']:.1f}).",
        "",
        "## Surface strategies and the blind probe",
        "",
        *[t.markdown() for t in tables.values()],
        *cloze_markdown(result),
        *(["## Figures", ""] if result.analysis is not None else []),
    ]
    for name, caption in FIGURES.items() if result.analysis is not None else ():
        lines += [f"![{caption}](figures/{name}.png)", "", caption, ""]
    return "\n".join(lines) + "\n"
