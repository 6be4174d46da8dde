"""Capacity plan: how many calls, tokens, dollars and hours a probe design costs, without calling a model.

A plan config (YAML/JSON, or ``paper_config()``) names the items (``items: <count>`` with ``n_options``,
or ``items_file: items.jsonl``), the quota per region, and a list of ``runs``; each run multiplies
``items x models x (orders + forced slots per condition) x phrasings x labels x reasoning``.

Tokens are estimated from real rendered prompts: ``build_presentations`` renders a sample of items
(``sample_items`` from ``sample_file`` or the customs bank shipped in ``data/``) under each run's
phrasing, labels, condition and reasoning, and the mean prompt length in characters is divided by
``chars_per_token``. The default 3.0 is a rough figure for Ukrainian Cyrillic under current BPE
tokenizers (about 2.5-3.5 characters a token; English runs nearer 4): calibrate it against the
``input_tokens`` of a real run's predictions. Output tokens per call come from ``output_tokens`` by
reasoning mode (defaults from the paper's Table 9: a label ~5, extended thinking ~60, step-by-step ~620).
Prices are the model configs' ``price_per_1k_input/output`` (models without a price cost 0, marked).

Wall time per model: calls per minute = min(rpm x regions, tpm x regions / tokens per call,
concurrency x 60 / latency_s), regions and concurrency from the model config, rpm/tpm/latency from
``quota`` (per model under ``quota.per_model``). Models have separate quotas, so they run side by side:
the plan's wall time is the slowest model's; the sum is what one model at a time would take.
Calls repeated across runs (a sweep's baseline setting) are counted in each run: the cache would
answer them once, so the totals are an upper bound.
It lives in ``tasks/``: it renders the probe task's prompts, and the engine imports no task.
"""

from __future__ import annotations

import glob
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindmcq.backends.registry import abilities_of
from blindmcq.config.files import REPO_ROOT, Groups
from blindmcq.config.schema import (
    BedrockModel,
    CustomsDataset,
    ItemsDataset,
    OpenAIModel,
    PdfDataset,
    PlanConfig,
    PlanModelQuota,
    PlanQuota,
    PlanRun,
    PricedModel,
    default,
)
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import ConfigError, InputError
from blindmcq.vocabulary import CONDITIONS, PUBLISHED_ORDER

ROOT = REPO_ROOT
# Real items to render prompts from, first found: the DVC-tracked inputs, the shared inputs beside the
# clone, or the corpus a `dvc repro` extracted from the committed default PDFs.
SAMPLE_SOURCES = (
    CustomsDataset(loader="customs", path=str(ROOT / "data/ua-customs-exam/questions.json")),
    CustomsDataset(loader="customs", path=str(ROOT.parent / "shared/data/ua-customs-exam/questions.json")),
    ItemsDataset(loader="items", path=str(ROOT / "results/corpus/items.jsonl")),
    # a clean clone: the default bank's committed PDFs, extracted in memory (about 20 CPU-seconds)
    PdfDataset(loader="pdf", paths=[str(ROOT / "defaults/bank/*.pdf")], source="dmsu"),
)
# Bedrock batch inference is billed at 50% of the on-demand price of the same model: "a 50% lower price
# compared to on-demand pricing" (AWS's Bedrock training module on Trailhead; the user guide's batch page
# points to https://aws.amazon.com/bedrock/pricing/, not in the search corpus, for per-model prices).
BATCH_PRICE_FACTOR = 0.5
BATCH_MAX_RECORDS = 50_000  # records per batch job (blindmcq.engine.batch.BatchSettings.max_records)
PLAN_GROUPS = ("prompt", "labels", "reasoning", "model", "dataset")  # the config groups a plan reads
PAPER_DATASET = "customs-default"  # whose words the prompts name the paper's banks with (its description)


def _paper_prompt(configs: Groups, phrasing: str) -> Any:
    """Phrasing ``phrasing`` naming the bank as the paper's prompts do (``PAPER_DATASET``'s description,
    where ``configs`` holds the dataset group; else the phrasing's neutral words)."""
    from blindmcq.tasks.presentations import for_bank

    words = None
    if "dataset" in configs.options and PAPER_DATASET in configs.options["dataset"]:
        words = configs.option("dataset", PAPER_DATASET).description
    return for_bank(configs.option("prompt", phrasing), words)


DEFAULT_OUTPUT_TOKENS = {"direct": 5, "thinking": 60, "step_by_step": 620}


@dataclass(frozen=True)
class Quota:
    rpm: float
    tpm: float
    latency_s: float

    @classmethod
    def of(cls, quota: PlanQuota, override: PlanModelQuota | None = None) -> Quota:
        """The plan's quota, with what a model's own (``quota.per_model.<name>``) sets."""
        own = override or PlanModelQuota()
        return cls(
            rpm=quota.rpm if own.rpm is None else own.rpm,
            tpm=quota.tpm if own.tpm is None else own.tpm,
            latency_s=quota.latency_s if own.latency_s is None else own.latency_s,
        )


@dataclass(frozen=True)
class Run:
    name: str
    items: int | None  # None = all items
    models: tuple[str, ...]
    conditions: tuple[str, ...]
    orders: dict[str, Any]  # condition -> "all" | "published" | int | list of ids
    forced: bool
    forced_conditions: tuple[str, ...]
    phrasings: tuple[str, ...]
    labels: tuple[str, ...]
    reasoning: tuple[str, ...]

    @property
    def settings(self) -> int:
        return len(self.phrasings) * len(self.labels) * len(self.reasoning)


@dataclass
class Plan:
    runs: list[dict[str, Any]]
    models: list[dict[str, Any]]
    totals: dict[str, Any]
    routes: list[dict[str, Any]] = field(default_factory=list)
    unverified: list[dict[str, Any]] = field(default_factory=list)


def _names(value: Any, key: str, default: Sequence[str] | None = None) -> tuple[str, ...]:
    if value is None and default is not None:
        return tuple(default)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(key, f"expected a non-empty list of names, got {value!r}")
    return tuple(value)


def parse_run(run: PlanRun, index: int, all_models: Sequence[str], configs: Groups) -> Run:
    """Run ``index`` of a plan; a presentation it leaves unnamed is the one conf/config.yaml composes."""
    key = f"runs[{index}]"
    conditions = _names(run.conditions, f"{key}.conditions", ["blind"])
    bad = set(conditions) - set(CONDITIONS)
    if bad:
        raise ConfigError(f"{key}.conditions", f"unknown conditions {sorted(bad)}")
    orders = {"blind": "all", "full": "published"} if run.orders is None else run.orders
    if not isinstance(orders, Mapping):
        orders = dict.fromkeys(conditions, orders)
    chosen = {c: orders[c] if c in orders else "published" for c in conditions}
    for condition, order in chosen.items():
        ok = order in ("all", "published") or (isinstance(order, int) and order >= 0)
        ok = ok or (isinstance(order, list) and bool(order))
        if isinstance(order, bool) or not ok:
            raise ConfigError(
                f"{key}.orders.{condition}", f"expected all, published, a count or ids: {order!r}"
            )
    return Run(
        name=str(run.name or f"run {index}"),
        items=None if run.items == "all" else int(run.items),
        models=tuple(all_models) if run.models == "all" else _names(run.models, f"{key}.models"),
        conditions=conditions,
        orders=chosen,
        forced=run.forced,
        forced_conditions=_names(run.forced_conditions, f"{key}.forced_conditions", ["blind"]),
        # unnamed presentations: the ones conf/config.yaml composes
        phrasings=_names(run.phrasings, f"{key}.phrasings", [configs.default("prompt")]),
        labels=_names(run.labels, f"{key}.labels", [configs.default("labels")]),
        reasoning=_names(run.reasoning, f"{key}.reasoning", [configs.default("reasoning")]),
    )


def _n_orders(order: Any, n: int) -> int:
    if order == "all":
        return 2 * n
    if order == "published":
        return 1
    return len(order) if isinstance(order, list) else int(order)


def calls_per_item(run: Run, n_options: int) -> int:
    """Presentations of one N-option item under one setting of ``run`` (one model)."""
    per = 0
    for condition in run.conditions:
        per += _n_orders(run.orders[condition], n_options)
        if run.forced and condition in run.forced_conditions:
            per += n_options
    return per


def count_calls(run: Run, option_counts: Sequence[int]) -> int:
    """Calls of ``run`` over items with these option counts (the first ``run.items`` of them)."""
    chosen = option_counts if run.items is None else option_counts[: run.items]
    return sum(calls_per_item(run, n) for n in chosen) * len(run.models) * run.settings


# ---------------------------------------------------------------- tokens from rendered prompts


def mean_prompt_chars(
    items: Sequence[Item], *, condition: str, phrasing: str, labels: str, reasoning: str, configs: Groups
) -> float:
    """Mean characters of system + user prompt over ``items`` in the published order; ``configs`` holds
    the named prompt, labels and reasoning options."""
    from blindmcq.tasks.presentations import build_presentations

    protocol = "md" if labels == "dash" else "sl"
    published = [PUBLISHED_ORDER]
    presentations = build_presentations(
        items, conditions=[condition], blind_orders=published, full_orders=published, forced=False,
        prompt=_paper_prompt(configs, phrasing), labels=configs.option("labels", labels),
        reasoning=configs.option("reasoning", reasoning), protocol=protocol,
    )  # fmt: skip
    return sum(len(p.user) + len(p.system or "") for p in presentations) / max(1, len(presentations))


def default_sample() -> list[Item]:
    """The first real bank found (SAMPLE_SOURCES), read the corpus stage's way (``load_dataset``; the
    default bank's PDFs with the reviewed corrections applied)."""
    from blindmcq.datasets.registry import load_dataset

    for source in SAMPLE_SOURCES:
        where = str(source.path or source.paths[0])
        if not (glob.glob(where) if glob.has_magic(where) else Path(where).exists()):
            continue
        return load_dataset(source, root=ROOT)
    tried = ", ".join(str(s.path or s.paths[0]) for s in SAMPLE_SOURCES)
    raise InputError(f"no real items to render prompts from (tried {tried}); pass sample_file or items_file")


def sample_origin(plan: PlanConfig) -> str:
    """Whose items the prompts are rendered from (``sample_for_tokens``), in words."""
    if plan.items_file:
        return f"the plan's items_file {plan.items_file}"
    if plan.sample_file:
        return f"sample_file {plan.sample_file}"
    names = {
        "customs": "the State Customs Service bank", "items": "the pipeline's corpus",
        "pdf": "the default bank's PDFs (State Customs Service items, Commission layout)",
    }  # fmt: skip
    for source in SAMPLE_SOURCES:
        where = str(source.path or source.paths[0])  # the PDF source names a glob under paths
        if glob.glob(where) if glob.has_magic(where) else Path(where).exists():
            return f"{names[source.loader]}, {where}"
    return "no bank found"


def sample_for_tokens(
    items: Sequence[Item] | None,
    *,
    size: int,
    sample_file: str | None = None,
    seed: int = default(PlanConfig, "seed"),
) -> list[Item]:
    """Up to ``size`` usable items (seeded) to render: the plan's own ``items``, else those of
    ``sample_file``, else a real bank."""
    import numpy as np

    if items is None:
        items = read_items(sample_file) if sample_file else default_sample()
    usable = [item for item in items if item.usable]
    if not usable:
        raise InputError("no usable items to estimate prompt lengths from", file=sample_file)
    if len(usable) <= size:
        return usable
    chosen = np.random.default_rng(seed).choice(len(usable), size=size, replace=False)
    return [usable[i] for i in sorted(chosen)]


# ---------------------------------------------------------------- the plan


def build_plan(plan: PlanConfig, *, configs: Groups) -> Plan:
    """Count, price and time a plan config (see the module docstring); calls no model. ``configs`` holds
    the options the plan names (``PLAN_GROUPS``: prompts, labels, reasoning modes, models), read by the
    command line."""
    items: list[Item] | None = None
    if plan.items_file:
        items = [item for item in read_items(plan.items_file) if item.usable]
        option_counts = [item.n_options for item in items]
    else:
        option_counts = [plan.n_options] * int(plan.items or 0)
    all_models = _names(plan.models, "models")
    runs = [parse_run(r, i, all_models, configs) for i, r in enumerate(plan.runs)]
    chars_per_token = plan.chars_per_token
    out_tokens = {**DEFAULT_OUTPUT_TOKENS, **dict(plan.output_tokens or {})}
    quota = plan.quota or PlanQuota()
    per_model_quota = dict(quota.per_model or {})

    sample = sample_for_tokens(items, size=plan.sample_items, sample_file=plan.sample_file, seed=plan.seed)
    chars: dict[tuple[str, str, str, str], float] = {}
    run_rows: list[dict[str, Any]] = []
    per_model: dict[str, dict[str, float]] = {}
    for run in runs:
        run_calls = count_calls(run, option_counts)
        run_in = run_out = 0.0
        for condition in run.conditions:
            share = _condition_calls(run, condition, option_counts)
            for phrasing in run.phrasings:
                for labels in run.labels:
                    for reasoning in run.reasoning:
                        setting = (condition, phrasing, labels, reasoning)
                        if setting not in chars:
                            chars[setting] = mean_prompt_chars(
                                sample, condition=condition, phrasing=phrasing, labels=labels,
                                reasoning=reasoning, configs=configs,
                            )  # fmt: skip
                        if reasoning not in out_tokens:
                            raise ConfigError(f"output_tokens.{reasoning}", "no output-token estimate")
                        tin = share * chars[setting] / chars_per_token
                        tout = share * float(out_tokens[reasoning])
                        run_in, run_out = run_in + tin * len(run.models), run_out + tout * len(run.models)
                        for model in run.models:
                            acc = per_model.setdefault(
                                model, {"calls": 0, "input_tokens": 0.0, "output_tokens": 0.0}
                            )
                            acc["calls"] += share
                            acc["input_tokens"] += tin
                            acc["output_tokens"] += tout
        n_items = len(option_counts) if run.items is None else min(run.items, len(option_counts))
        run_rows.append(
            {"run": run.name, "items": n_items,
             "models": len(run.models), "settings": run.settings, "calls": run_calls,
             "input_tokens": run_in, "output_tokens": run_out}
        )  # fmt: skip

    model_rows = [
        _price_and_time(name, acc, configs, Quota.of(quota, per_model_quota.get(name)))
        for name, acc in per_model.items()
    ]
    totals = {
        "calls": sum(r["calls"] for r in run_rows),
        "input_tokens": sum(r["input_tokens"] for r in run_rows),
        "output_tokens": sum(r["output_tokens"] for r in run_rows),
        "cost_usd": sum(r["cost_usd"] for r in model_rows),
        "wall_hours_parallel": max(r["wall_hours"] for r in model_rows),
        "wall_hours_sequential": sum(r["wall_hours"] for r in model_rows),
        "chars_per_token": chars_per_token,
        "sample_items": len(sample),
        "sample_from": sample_origin(plan),
        "bank": str(plan.bank or ""),
    }
    names = [r["model"] for r in model_rows]
    return Plan(
        runs=run_rows, models=model_rows, totals=totals,
        routes=routes(model_rows, configs, throughput=plan.throughput),
        unverified=unverified_models(names, configs),
    )  # fmt: skip


def unverified_models(names: Sequence[str], configs: Groups) -> list[dict[str, Any]]:
    """Bedrock model configs not marked ``verified: true``, with what AWS's documentation did not confirm."""
    out = []
    for name in names:
        model = configs.option("model", name)
        verified = model.verified if isinstance(model, PricedModel) else None
        if abilities_of(model).catalogue and verified is not True:
            unverified = (model.unverified if isinstance(model, PricedModel) else None) or ["(not recorded)"]
            out.append({"model": name, "unverified": list(unverified)})
    return out


def routes(
    model_rows: Sequence[Mapping[str, Any]], configs: Groups, *, throughput: float | None = None
) -> list[dict[str, Any]]:
    """The three ways to make the calls: on-demand (quota-bound), Bedrock batch (50% price, asynchronous,
    only families the batch documentation lists) and a local/OpenAI-compatible server (no token price;
    wall time = calls / measured ``throughput`` in calls per second, one server taking the models in turn)."""
    from blindmcq.engine.batch import batch_family

    calls = sum(m["calls"] for m in model_rows)
    cost = sum(m["cost_usd"] for m in model_rows)
    batchable, refused = [], []
    for m in model_rows:
        model = configs.option("model", m["model"])
        model_id = model.model_id if isinstance(model, BedrockModel | OpenAIModel) else ""
        family = batch_family(model_id) if abilities_of(model).batch else None
        (batchable if family else refused).append(m)
    jobs = sum(-(-m["calls"] // BATCH_MAX_RECORDS) for m in batchable)
    if throughput is not None and (isinstance(throughput, bool) or not float(throughput) > 0):
        raise ConfigError("throughput", f"expected calls per second > 0, got {throughput!r}")
    return [
        {"route": "on-demand", "calls": calls, "cost_usd": cost,
         "wall_hours": max((m["wall_hours"] for m in model_rows), default=0.0),
         "note": "quota-bound, models side by side"},
        {"route": "batch", "calls": sum(m["calls"] for m in batchable),
         "cost_usd": BATCH_PRICE_FACTOR * sum(m["cost_usd"] for m in batchable), "wall_hours": None,
         "jobs": jobs, "not_batchable": [m["model"] for m in refused],
         "note": f"{BATCH_PRICE_FACTOR:.0%} of on-demand; asynchronous, each job within its"
                 " job_timeout_hours (24-168)"},
        {"route": "server", "calls": calls, "cost_usd": None,
         "wall_hours": calls / float(throughput) / 3600.0 if throughput else None,
         "throughput": throughput,
         "note": "own hardware; wall time from measured throughput" if throughput
                 else "pass --throughput CALLS_PER_S or --measure MODEL"},
    ]  # fmt: skip


def _condition_calls(run: Run, condition: str, option_counts: Sequence[int]) -> int:
    """Calls of one model under one setting of ``run`` in ``condition``."""
    chosen = option_counts if run.items is None else option_counts[: run.items]
    single = Run(**{**run.__dict__, "conditions": (condition,)})
    return sum(calls_per_item(single, n) for n in chosen)


def _price_and_time(name: str, acc: Mapping[str, float], configs: Groups, quota: Quota) -> dict[str, Any]:
    model = configs.option("model", name)  # the backend's own schema: a provider's has prices and regions
    hosted = isinstance(model, BedrockModel | OpenAIModel)
    regions = len((model.regions if hosted else None) or [(model.region if hosted else None) or "local"])
    concurrency = int(model.concurrency or 1)
    calls, tin, tout = acc["calls"], acc["input_tokens"], acc["output_tokens"]
    priced_model = isinstance(model, PricedModel)
    pin = model.price_per_1k_input if priced_model else None
    pout = model.price_per_1k_output if priced_model else None
    priced = pin is not None and pout is not None
    cost = (tin * float(pin) + tout * float(pout)) / 1000.0 if priced else 0.0
    tokens_per_call = (tin + tout) / calls if calls else 0.0
    limits = {
        "rpm": quota.rpm * regions,
        "tpm": quota.tpm * regions / tokens_per_call if tokens_per_call else float("inf"),
        "concurrency": concurrency * 60.0 / quota.latency_s,
    }
    binding = min(limits, key=lambda k: limits[k])
    per_minute = limits[binding]
    return {
        "model": name, "regions": regions, "concurrency": concurrency, "calls": int(calls),
        "input_tokens": tin, "output_tokens": tout, "cost_usd": cost, "priced": priced,
        "calls_per_min": per_minute, "limit": binding, "wall_hours": calls / per_minute / 60.0,
    }  # fmt: skip


# ---------------------------------------------------------------- the paper's design


PAPER_MODELS = [
    "sonnet-4.6", "haiku-4.5", "gpt-5.6", "nova-pro", "nova-2-lite", "nova-micro", "llama-3.3-70b",
    "llama-3.1-8b", "qwen3-32b", "gemma", "ministral-8b", "pixtral-large",
]  # fmt: skip
SWEEP_MODELS = ["sonnet-4.6", "gpt-5.6", "nova-pro"]  # paper Tables 6-8


def paper_config() -> dict[str, Any]:
    """The paper's design at full scale (about 1.2 million calls): 11,990 items x 8 orders x 12 models
    blind; full condition on the 600-item sample; on 400 gate-accepted items, forced placement, the
    phrasing x label sweep (Tables 6-7) and the reasoning interventions (Table 9)."""
    return {
        "bank": "11,990 four-option items, the paper's bank (the Higher Qualification Commission of "
        "Judges' published tables) as the paper counts it; a count, no item is read",
        "items": 11_990,
        "n_options": 4,
        "models": PAPER_MODELS,
        "quota": {"rpm": 250, "tpm": 1_000_000, "latency_s": 2.0},
        "runs": [
            {"name": "blind, 8 orders (Tables 3-5, Fig. 1)", "conditions": ["blind"], "orders": "all"},
            {"name": "full, published order, 600-item sample (Table 3)", "items": 600,
             "conditions": ["full"], "orders": "published"},
            {"name": "forced placement, 400 items (Table 8)", "items": 400, "models": SWEEP_MODELS,
             "conditions": ["blind"], "orders": {"blind": 0}, "forced": True},
            {"name": "phrasings x labels, 400 items (Tables 6-7)", "items": 400, "models": SWEEP_MODELS,
             "conditions": list(CONDITIONS), "orders": "published",
             "phrasings": ["original", "minimal", "no_domain", "english", "guessing", "no_exam", "expert"],
             "labels": ["latin", "cyrillic", "numerals"]},
            {"name": "step-by-step, 400 items (Table 9)", "items": 400, "models": ["sonnet-4.6", "nova-pro"],
             "conditions": list(CONDITIONS), "orders": "published", "reasoning": ["step_by_step"]},
            {"name": "extended thinking, 400 items (Table 9)", "items": 400,
             "models": ["sonnet-4.6", "deepseek-r1"], "conditions": list(CONDITIONS), "orders": "published",
             "reasoning": ["thinking"]},
        ],
    }  # fmt: skip


# ---------------------------------------------------------------- printing and CLI


def _tok(x: float) -> str:
    return f"{x / 1e6:,.1f}M"


def format_plan(plan: Plan) -> str:
    """The plan as plain-text tables (runs, models, totals)."""
    t = plan.totals
    lines = [f"items: {t['bank']}"] if t.get("bank") else []
    lines += [
        f"{'run':<52} {'items':>7} {'models':>6} {'settings':>8} {'calls':>11} {'in tok':>9} {'out tok':>8}"
    ]
    for r in plan.runs:
        lines.append(
            f"{r['run'][:52]:<52} {r['items']:>7,} {r['models']:>6} {r['settings']:>8} {r['calls']:>11,}"
            f" {_tok(r['input_tokens']):>9} {_tok(r['output_tokens']):>8}"
        )
    lines += ["", f"{'model':<16} {'regions':>7} {'calls':>11} {'in tok':>9} {'out tok':>8} {'cost USD':>10}"
              f" {'calls/min (bound by)':>26} {'hours':>7}"]  # fmt: skip
    for m in plan.models:
        cost = f"{m['cost_usd']:,.0f}" if m["priced"] else "n/a"
        per_min = f"{m['calls_per_min']:,.0f} ({m['limit']})"  # the figure and the limit that sets it
        lines.append(
            f"{m['model']:<16} {m['regions']:>7} {m['calls']:>11,} {_tok(m['input_tokens']):>9}"
            f" {_tok(m['output_tokens']):>8} {cost:>10} {per_min:>26}"
            f" {m['wall_hours']:>7,.1f}"
        )
    lines += [
        "",
        f"total calls {t['calls']:,}; input tokens {_tok(t['input_tokens'])},"
        f" output {_tok(t['output_tokens'])}"
        f" (chars/token {t['chars_per_token']}, prompt lengths from {t['sample_items']} items of"
        f" {t.get('sample_from') or 'the plan'})",
        "calls/min: the lowest of the model's limits, rpm x regions, tpm x regions / tokens a call, or"
        " concurrency x 60 / latency_s; the limit named binds",
        f"cost ~ ${t['cost_usd']:,.0f} at the model configs' prices",
        f"wall time ~ {t['wall_hours_parallel']:,.1f} h with models side by side"
        f" ({t['wall_hours_sequential']:,.1f} h one model at a time)",
    ]
    if plan.routes:
        lines += ["", f"{'route':<10} {'calls':>11} {'cost USD':>10} {'hours':>8}  note"]
        for r in plan.routes:
            cost = "n/a" if r["cost_usd"] is None else f"{r['cost_usd']:,.0f}"
            hours = "n/a" if r["wall_hours"] is None else f"{r['wall_hours']:,.1f}"
            note = r["note"]
            if r["route"] == "batch":
                note += f"; {r['jobs']} jobs"
                if r["not_batchable"]:
                    note += f"; not batchable (family not listed): {', '.join(r['not_batchable'])}"
            if r["route"] == "server" and r.get("throughput"):
                note += f" ({r['throughput']:g} calls/s)"
            lines.append(f"{r['route']:<10} {r['calls']:>11,} {cost:>10} {hours:>8}  {note}")
    if plan.unverified:
        lines += ["", "model configs not verified against AWS documentation (conf/model/<name>.yaml):"]
        lines += [f"  {u['model']:<16} {', '.join(u['unverified'])}" for u in plan.unverified]
    return "\n".join(lines)


def measure_throughput(
    model: str, n_calls: int = 20, *, configs: Groups, sample_file: str | None = None
) -> float:
    """Calls per second the model's backend sustains at its configured concurrency, from ``n_calls`` real
    prompts (default-bank or sample items, no cache: every call is made)."""
    from concurrent.futures import ThreadPoolExecutor

    from blindmcq.backends.registry import make_backend
    from blindmcq.tasks.presentations import build_presentations, to_request

    if n_calls < 1:
        raise ConfigError("measure_calls", "must be at least 1")
    model_cfg = configs.option("model", model)
    backend = make_backend(model_cfg)
    items = sample_for_tokens(None, size=n_calls, sample_file=sample_file)
    presentations = build_presentations(
        items, conditions=["blind"], blind_orders="all", full_orders=[PUBLISHED_ORDER], forced=False,
        # conf/config.yaml's presentation
        prompt=_paper_prompt(configs, configs.default("prompt")),
        labels=configs.option("labels", configs.default("labels")),
        reasoning=configs.option("reasoning", configs.default("reasoning")), protocol="sl",
    )[:n_calls]  # fmt: skip
    requests = [
        to_request(p, model=model, temperature=0.0, max_tokens=int(model_cfg.max_tokens or 16),
                   score_labels=False)
        for p in presentations
    ]  # fmt: skip
    workers = int(getattr(backend, "concurrency", 1) or 1)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        responses = list(pool.map(backend.complete, requests))
    elapsed = time.perf_counter() - started
    failed = sum(r.status == "error" for r in responses)
    if failed:
        first = next(r.error for r in responses if r.status == "error")
        raise InputError(f"{failed} of {len(responses)} measuring calls to {model} failed: {first}")
    return len(responses) / elapsed
