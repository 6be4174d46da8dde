"""NonsenseQA diagnostic: Select-and-Letter against Matched-and-Dashed under skewed few-shot prompts.

Every test item is asked in the ``full`` condition (its nonsense question and four random-word options),
so content can never earn a point: any accuracy above chance (1/N) is bias. Each run is a (protocol,
few-shot skew) pair; ``none`` means no examples.

Key placement (``keys``). ``skew`` (default): the test keys follow the prompt's skew (``all_a``: every
key in slot A; ``a70``: 70%; ``uniform``: even; ``none``: as drawn), the seed's setting of a benchmark
whose answer pattern the examples reveal: a model that follows the examples' pattern scores above
chance. ``drawn``: every run uses the keys as drawn (uniform), where the pattern cannot pay and the bias
shows only as the share of picks in slot A.

Outputs (``out_dir``, each written atomically): ``predictions.parquet`` (one row per call, ``setting``
= ``fewshot=<skew>``), ``nonsenseqa_results.csv`` (per protocol x skew: accuracy with Wilson interval,
one-sided binomial p against chance, key and pick shares of slot A, MD statuses, explicit and implicit
few-shot bias, order variance), ``nonsenseqa_variance.csv`` (variance across orders, ratio MD/SL),
``nonsenseqa.md`` and ``nonsenseqa.png``.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import logging
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.answers.predictions import write_predictions
from blindmcq.atomic import csv_text, write_bytes, write_text
from blindmcq.backends.base import Backend, ModelRequest, ModelResponse
from blindmcq.backends.registry import abilities_for, make_backend
from blindmcq.config.files import Groups
from blindmcq.config.schema import Condition, ModelSchema, NonsenseSettings
from blindmcq.datasets.items import Item
from blindmcq.datasets.nonsense import generate_nonsenseqa, key_at, skew_slots
from blindmcq.errors import ConfigError
from blindmcq.protocols.compare import accuracy_by_protocol, fewshot_bias, order_variance, variance_ratio
from blindmcq.stats import clustered_chance_test, clustered_proportion, holm
from blindmcq.tasks.presentations import select_orders
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe
from blindmcq.vocabulary import ANSWER_PROTOCOLS, FEWSHOTS

log = logging.getLogger(__name__)

KEYS = typing.get_args(typing.get_type_hints(NonsenseSettings)["keys"])  # ("skew", "drawn")
NONSENSE_GROUPS = ("prompt", "protocol", "reasoning", "labels")  # the config groups a run picks from
BY = ["model", "protocol", "setting"]
# The answer heading of the MD few-shot examples (blindmcq.datasets.nonsense.fewshot_block).
_MD_HEADING = {"uk": "Остаточна відповідь:", "en": "Final answer:"}


def place_keys_shown(items: Sequence[Item], skew: str, seed: int, order: Sequence[int] | None) -> list[Item]:
    """The items with their keys moved (distractors keep their relative order; ids stay: the content is
    the same item's) so that, shown in ``order`` (slot s shows published option
    ``order[s]``; None: as published), the key sits in the slot ``skew_slots`` gives. So the skew holds
    in every order asked, not only the published one: rotating the options of a skewed bank would move
    its keys to every slot equally, and a pattern the examples reveal could never pay."""
    if skew == "none":
        return list(items)
    n_options = {item.n_options for item in items}
    if len(n_options) > 1:
        raise ValueError("key placement needs items with one number of options")
    slots = skew_slots(len(items), skew, n_options.pop() if items else 4, seed)  # type: ignore[arg-type]
    published = [int(order[s]) if order is not None else s for s in slots]
    return [
        dataclasses.replace(item, options=key_at(item, slot), key=slot)
        for item, slot in zip(items, published, strict=True)
    ]


class UntilBlankLine:
    """A base model's generation cut at the first blank line (lm-evaluation-harness's ``until``): after
    its answer a base model goes on to invent the next few-shot example, whose answer line would
    otherwise be the one extracted."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = f"{inner.name}:until-blank-line"
        self.concurrency = getattr(inner, "concurrency", 1)

    def complete(self, request: ModelRequest) -> ModelResponse:
        response = self.inner.complete(request)
        if not request.choices:
            response.text = response.text.lstrip("\n").split("\n\n", 1)[0]
        return response


def _base_model_md(model_cfg: ModelSchema, language: str) -> tuple[ModelSchema, Backend]:
    """A local base model under MD: cued with the examples' answer heading, cut at a blank line."""
    heading = _MD_HEADING[language]
    cfg = dataclasses.replace(model_cfg, answer_prefix=f"\n{heading}")
    return cfg, UntilBlankLine(make_backend(cfg))


def _runs(
    protocols: Sequence[str], skews: Sequence[str], runs: Sequence[tuple[str, str]] | None
) -> list[tuple[str, str]]:
    chosen = list(runs) if runs is not None else list(itertools.product(protocols, skews))
    for protocol, skew in chosen:
        if protocol not in ANSWER_PROTOCOLS:
            raise ConfigError("protocol", f"expected sl or md, got {protocol!r}")
        if skew not in FEWSHOTS:
            raise ConfigError("protocol.fewshot", f"expected one of {FEWSHOTS}, got {skew!r}")
    if not chosen:
        raise ConfigError("runs", "nothing to run")
    return chosen


def run_nonsense(
    model_cfg: ModelSchema,
    settings: NonsenseSettings | None = None,
    *,
    configs: Groups,
    cache_path: str | Path,
    out_dir: str | Path | None,
    backend: Backend | None = None,
    words: Sequence[str] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run NonsenseQA for every (protocol, skew) of ``settings`` (``config.schema.NonsenseSettings``, its
    defaults when None; runs default to ``protocols`` x ``skews``); returns the predictions and, with
    ``out_dir``, writes the outputs listed in the module docstring.

    ``orders``: ``"all"`` (the 2N rotations) or order ids such as ``["rot0"]``. ``md_max_tokens`` caps
    MD generation; SL uses the direct reasoning mode (scored by label log-probabilities on a local
    base model). ``words`` replaces the dictionary word list (tests). ``configs`` holds the prompt,
    protocol, reasoning and labels options (``NONSENSE_GROUPS``), read by the command line."""
    s = NonsenseSettings() if settings is None else settings
    seed, orders = s.seed, s.orders
    runs = None if s.runs is None else [tuple(pair) for pair in s.runs]
    bank = generate_nonsenseqa(seed, n_test=s.n_test, words=words)
    prompt = configs.option("prompt", s.phrasing)
    n_options = bank.test[0].n_options if bank.test else 4
    # with keys=skew each order gets its own placement, so the skew holds in every order shown
    per_order = [(o, list(perm)) for o, perm in select_orders(n_options, orders, key="orders")]
    parts = []
    for protocol, skew in _runs(s.protocols, s.skews, runs):
        placed = skew if s.keys == "skew" else "none"
        versions = (
            [(place_keys_shown(bank.test, placed, seed, perm), [o]) for o, perm in per_order]
            if placed != "none"
            else [(list(bank.test), orders)]
        )
        protocol_cfg = dataclasses.replace(
            configs.option("protocol", protocol), fewshot=skew, n_shots=s.n_shots, fewshot_seed=seed
        )
        reasoning = configs.option("reasoning", "direct")
        cfg, run_backend = model_cfg, backend
        if protocol == "md":
            reasoning = dataclasses.replace(reasoning, max_tokens=s.md_max_tokens)
            if backend is None and abilities_for(model_cfg).scores_by_default:  # a base model
                cfg, run_backend = _base_model_md(model_cfg, prompt.language)
        df = pd.concat([
            run_probe(
                items, cfg, PresentationSetup(
                    prompt=prompt, labels=configs.option("labels", s.labels), reasoning=reasoning,
                    condition=Condition(conditions=["full"], full_orders=asked), protocol=protocol_cfg,
                    schemes=configs.options["labels"],
                ), EngineSettings(cache_path, progress=progress),
                backend=run_backend, fewshot_examples=bank.fewshot,
            )
            for items, asked in versions
        ], ignore_index=True)  # fmt: skip
        df["setting"] = f"fewshot={skew}"
        parts.append(df)
    predictions = pd.concat(parts, ignore_index=True)
    if out_dir is not None:
        meta = {"n_test": s.n_test, "seed": seed, "n_shots": s.n_shots, "orders": orders, "keys": s.keys}
        write_outputs(predictions, out_dir, meta={**meta, "phrasing": s.phrasing})
    return predictions


# ---------------------------------------------------------------- tables


def summarise(predictions: pd.DataFrame) -> pd.DataFrame:
    """One row per model x protocol x setting (see the module docstring for the columns)."""
    acc = accuracy_by_protocol(predictions, BY)
    rows = predictions.assign(
        # a call with no pick (uncertain, tie, unparseable) did not pick A: it stays in the denominator
        key_a=predictions["key_slot"].eq(0).fillna(False).astype(bool),
        pick_a=predictions["picked_slot"].eq(0).fillna(False).astype(bool),
        chance=1.0 / predictions["n_options"],
    )  # fmt: skip
    shares = rows.groupby(BY).agg(
        key_rate_a=("key_a", "mean"), pick_rate_a=("pick_a", "mean"), chance=("chance", "mean")
    )
    bias = fewshot_bias(predictions, BY).drop(columns=["n", "accuracy"])
    var = order_variance(predictions, BY).rename(columns={"variance": "order_variance"})
    out = acc.merge(shares.reset_index(), on=BY).merge(bias, on=BY).merge(var, on=BY)
    # the unit is the item: its orders are not independent draws (a picker that ignores content but
    # keeps to one option answers an item the same way in every order)
    item_level = {
        key: clustered_proportion(g["correct"].astype(float), g["item_id"].astype(str))
        for key, g in predictions.groupby(BY, sort=True)
    }
    shares_of = [item_level[tuple(r)] for r in out[BY].itertuples(index=False)]
    out["ci_low"] = [c.lo for c in shares_of]
    out["ci_high"] = [c.hi for c in shares_of]
    out["items"] = [c.items for c in shares_of]
    out["p_above_chance"] = [
        clustered_chance_test(c, float(ch)) for c, ch in zip(shares_of, out["chance"], strict=True)
    ]
    out["p_holm"] = holm(out["p_above_chance"])  # every row is one test of the family
    out.insert(2, "skew", out.pop("setting").str.removeprefix("fewshot="))
    # the results table's row order: the vocabulary's
    rank = {
        name: {w: i for i, w in enumerate(words)}.get
        for name, words in [("protocol", ANSWER_PROTOCOLS), ("skew", FEWSHOTS)]
    }
    out = out.sort_values(["model", "protocol", "skew"], key=lambda c: c.map(rank.get(c.name, lambda v: v)))
    return out.reset_index(drop=True)


def variance_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """Variance of accuracy across orders per skew and its ratio MD/SL (NaN with a single order)."""
    out = variance_ratio(predictions, ["model", "setting"])
    out.insert(1, "skew", out.pop("setting").str.removeprefix("fewshot="))
    return out


def _fmt(x: float, digits: int = 3) -> str:
    return "–" if pd.isna(x) else f"{x:.{digits}f}"


def markdown(summary: pd.DataFrame, variance: pd.DataFrame, meta: Mapping[str, Any]) -> str:
    """The report section: setup, the table, the variance ratios and a plain reading of the numbers."""
    lines = [
        "## NonsenseQA: Select-and-Letter against Matched-and-Dashed",
        "",
        f"Questions and options of random Ukrainian words (seed {meta.get('seed')}, "
        f"{meta.get('n_test')} test items, full condition, phrasing `{meta.get('phrasing')}`, orders "
        f"{meta.get('orders')}), {meta.get('n_shots')} few-shot examples from the few-shot split. Test keys: "
        + ("placed like the examples' answers." if meta.get("keys") == "skew" else "as drawn (uniform).")
        + " Content cannot earn a point, so any accuracy above chance is bias. The unit is the item (its "
        "orders are not independent): accuracy with the Rao-Scott 95% interval (the beta interval at the "
        "effective sample size, calls divided by the item design effect); p = one-sided binomial test "
        "against chance at that size; Holm p adjusts it over every row of the table; uncertain, tie and "
        "unparseable count as wrong.",
        "",
        "| model | protocol | few-shot | n | accuracy [95% CI] | p (> chance) | Holm p | keys in A "
        "| picks in A | unparseable | uncertain | tie | names pattern |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in summary.itertuples():
        lines.append(
            f"| {r.model} | {r.protocol.upper()} | {r.skew} | {r.n} | {_fmt(r.accuracy)} "
            f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] | {r.p_above_chance:.2g} | {r.p_holm:.2g} "
            f"| {_fmt(r.key_rate_a, 2)} | {_fmt(r.pick_rate_a, 2)} | {_fmt(r.unparseable_rate, 2)} "
            f"| {_fmt(r.uncertain_rate, 2)} "
            f"| {_fmt(r.tie_rate, 2)} | {_fmt(r.explicit_rate, 2)} |"
        )
    lines += ["", "Variance of accuracy across option orders (population variance over the orders run):", ""]
    lines += ["| model | few-shot | var SL | var MD | MD/SL |", "|---|---|---:|---:|---:|"]
    for r in variance.itertuples():
        lines.append(
            f"| {r.model} | {r.skew} | {_fmt(r.var_sl, 5)} | {_fmt(r.var_md, 5)} | {_fmt(r.ratio_md_sl, 2)} |"
        )
    lines += ["", *_reading(summary), ""]
    return "\n".join(lines)


def _reading(summary: pd.DataFrame) -> list[str]:
    """One sentence per model and skewed prompt: is SL above chance, and where does MD land?"""
    out = []
    for (model, skew), group in summary.groupby(["model", "skew"], sort=True):
        if skew in ("uniform", "none"):
            continue
        sides = {r.protocol: r for r in group.itertuples()}
        sl, md = sides.get("sl"), sides.get("md")
        if sl is None:
            continue
        chance = sl.chance
        verdict = (
            f"above chance (item-level, Holm p {sl.p_holm:.2g})"
            if sl.p_holm < 0.05
            else "below chance"
            if sl.ci_high < chance
            else f"not distinguishable from chance (item-level, Holm p {sl.p_holm:.2g})"
        )
        interval = f"{_fmt(sl.accuracy)} [{_fmt(sl.ci_low)}, {_fmt(sl.ci_high)}]"
        text = f"- {model}, few-shot `{skew}`: SL {interval}, {verdict} (chance {chance:.2f})"
        if md is not None:
            moved = abs(md.accuracy - chance) < abs(sl.accuracy - chance)
            overlap = md.ci_low <= sl.ci_high and sl.ci_low <= md.ci_high
            text += (
                f"; MD {_fmt(md.accuracy)} [{_fmt(md.ci_low)}, {_fmt(md.ci_high)}], "
                f"{'closer to' if moved else 'not closer to'} chance"
                f"{' (intervals overlap)' if overlap else ' (intervals disjoint)'}"
            )
        out.append(text + ".")
    return out or ["- No skewed few-shot run with SL in this table."]


def figure(summary: pd.DataFrame) -> bytes:
    """PNG: SL against MD accuracy per skew (one panel per model), Wilson intervals, chance line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = sorted(summary["model"].unique())
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4), squeeze=False, sharey=True)
    skews = [s for s in FEWSHOTS if s in set(summary["skew"])]
    for ax, model in zip(axes[0], models, strict=True):
        part = summary[summary["model"] == model]
        x = np.arange(len(skews))
        for offset, protocol, colour in ((-0.18, "sl", "tab:blue"), (0.18, "md", "tab:orange")):
            rows = part[part["protocol"] == protocol].set_index("skew").reindex(skews)
            # clipped: the Wilson bound at 0 or 1 can sit a rounding error inside the estimate
            err = np.clip(
                np.vstack([rows["accuracy"] - rows["ci_low"], rows["ci_high"] - rows["accuracy"]]), 0, None
            )
            ax.bar(
                x + offset, rows["accuracy"], 0.36, yerr=err, capsize=3, color=colour, label=protocol.upper()
            )
        ax.axhline(float(part["chance"].mean()), color="grey", ls="--", lw=1, label="chance")
        ax.set_xticks(x, skews)
        ax.set_xlabel("few-shot answer distribution")
        ax.set_title(f"NonsenseQA, {model}")
        ax.set_ylim(0, 1)
        ax.legend(frameon=False)
    axes[0][0].set_ylabel("accuracy (95% Wilson CI)")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def write_outputs(predictions: pd.DataFrame, out_dir: str | Path, meta: Mapping[str, Any]) -> dict[str, Path]:
    """Predictions, tables, Markdown and figure under ``out_dir``. Everything is rendered before the
    first file is written, and each file is written all-or-nothing."""
    out = Path(out_dir)
    summary, variance = summarise(predictions), variance_table(predictions)
    texts = {
        out / "nonsenseqa_results.csv": csv_text(summary),
        out / "nonsenseqa_variance.csv": csv_text(variance),
        out / "nonsenseqa.md": markdown(summary, variance, meta),
    }
    png = figure(summary)
    paths = {"predictions": write_predictions(predictions, out / "predictions.parquet")}
    for path, text in texts.items():
        write_text(path, text)
    write_bytes(out / "nonsenseqa.png", png)
    paths.update(results=out / "nonsenseqa_results.csv", variance=out / "nonsenseqa_variance.csv",
                 markdown=out / "nonsenseqa.md", figure=out / "nonsenseqa.png")  # fmt: skip
    return paths
