"""A static HTML report of one run: one folder that opens from disk, no server, no network.

``index.html`` holds the paper's tables (the analysis' ``tables.json``) and figures (PNG, copied beside it,
linked relatively), and an item explorer: filter by bank, gate decision, leak type (``leak_tags``) and
blind-solved count, search, sortable columns; per item its question, options with the key marked, each
model's blind picks over the 2N orders, the lexical match from the statutes with its provision, and the
option lengths. The explorer's data sits in the page as JSON; the script and style are packaged templates.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import shutil
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.analysis.gate import GateResult, read_gate
from blindmcq.atomic import write_text
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import InputError
from blindmcq.reporting.markdown import FIGURE_CAPTIONS
from blindmcq.surface import chars, words
from blindmcq.vocabulary import LEXICAL

ASSETS = ("report.css", "report.js")
ORDER_RANK = {"rot": 0, "rev": 1}  # rot0..rot3 then rev0..rev3, as the paper lists them


def _template(name: str) -> str:
    return resources.files("blindmcq.reporting").joinpath("templates", name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: no ``</script>``, ``<!--`` or ``&`` can appear literally."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _order_key(order_id: str) -> tuple[int, str]:
    return ORDER_RANK.get(order_id[:3], 2), order_id


def _required(path: Path) -> Path:
    if not path.exists():
        raise InputError("expected output of an earlier stage is missing", file=str(path))
    return path


def analysis_tables(analysis_dir: Path) -> list[dict[str, Any]]:
    """The analysis tables in report order, as ``analysis.tables.write_tables`` left them in
    ``tables/tables.json`` (each ``Table.cells``: title, columns, rows, notes); [] when there is none."""
    path = analysis_dir / "tables" / "tables.json"
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def _inline(text: str) -> str:
    """Escaped text with the Markdown the conclusions use: `code`, **bold**, *italic*."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", out)


def conclusions_html(markdown: str | None, title: str) -> str:
    """The section a Markdown report opens with (its paragraphs, "- " bullets and "> " notes) as HTML,
    so that the page opens with the same conclusions; "" when there is none."""
    if not markdown or not markdown.strip():
        return ""
    parts = [f"<section id='conclusions'><h2>{html.escape(title)}</h2>"]
    for block in re.split(r"\n\s*\n", markdown.strip()):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        bullets = [line[2:] for line in lines if line.startswith("- ")]
        notes = [line[2:] for line in lines if line.startswith("> ")]
        if bullets:
            parts.append("<ul>" + "".join(f"<li>{_inline(b)}</li>" for b in bullets) + "</ul>")
        if notes:
            parts += [f"<p class='warning'>{_inline(n)}</p>" for n in notes]
        rest = [line for line in lines if not line.startswith(("- ", "> "))]
        if rest:
            parts.append(f"<p>{_inline(' '.join(rest))}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def tables_html(tables: list[dict[str, Any]]) -> str:
    """Each table (``analysis_tables``) as a section: its title, the table, its notes."""
    parts: list[str] = []
    esc = html.escape
    for t in tables:
        parts.append(f"<section class='table'><h3>{esc(t['title'])}</h3>")
        if t["columns"]:
            head = "".join(f"<th>{esc(c)}</th>" for c in t["columns"])
            body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in t["rows"])
            parts.append(
                f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
                "</table></div>"
            )
        parts += [f"<p class='note'>{esc(n)}</p>" for n in t["notes"]]
        parts.append("</section>")
    return "\n".join(parts) or "<p class='note'>No analysis tables were found.</p>"


def copy_figures(analysis_dir: Path, out_dir: Path) -> list[str]:
    """Copy the PNG figures into ``out_dir/figures``; their paths relative to ``index.html``."""
    figures = sorted((analysis_dir / "figures").glob("*.png"))
    target = out_dir / "figures"
    if figures:
        target.mkdir(parents=True, exist_ok=True)
    for fig in figures:
        if fig.resolve() != (target / fig.name).resolve():  # the audit keeps its figures in place
            shutil.copyfile(fig, target / fig.name)
    return [f"figures/{fig.name}" for fig in figures]


def figures_html(paths: list[str]) -> str:
    """Each figure at its natural size (no wider than the page), a link to the PNG itself, and its
    caption (``markdown.FIGURE_CAPTIONS``, the report's; the file's name for a figure without one)."""
    if not paths:
        return "<p class='note'>No figures were found.</p>"
    parts = []
    for p in paths:
        src, caption = html.escape(p), html.escape(FIGURE_CAPTIONS.get(Path(p).stem, Path(p).stem))
        title = caption.split(":", 1)[0]
        parts.append(
            f"<figure id='{html.escape(Path(p).stem)}'><a href='{src}' target='_blank' title='{title}, full "
            f"size'><img src='{src}' alt='{caption}' loading='lazy'></a><figcaption>{caption} "
            f"<a href='{src}' target='_blank'>Full size</a></figcaption></figure>"
        )
    return "\n".join(parts)


def blind_picks(predictions: pd.DataFrame) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """item -> run label -> the blind calls over the rotations and reversals, in order.

    A run label is the model, with phrasing/labels/protocol/reasoning added when the predictions hold
    more than one presentation, so sweeps stay apart.
    """
    blind = predictions[
        (predictions["condition"] == "blind")
        & predictions["order_id"].astype(str).str.fullmatch(r"(rot|rev)\d+")
    ].copy()
    if blind.empty:
        return {}
    setting_cols = ["phrasing", "labels", "protocol", "reasoning"]
    # column-wise: a row-wise join transposed 1.2M blind rows at paper scale (4 GB, minutes)
    setting = blind[setting_cols[0]].astype(str)
    for col in setting_cols[1:]:
        setting = setting + "/" + blind[col].astype(str)
    blind["setting"] = setting
    several = blind["setting"].nunique() > 1
    blind["run"] = blind["model"].astype(str) + (" · " + blind["setting"] if several else "")
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    # One pass over plain lists, in the groupby's order (groups sorted, rows in file order within each):
    # iterating each group's rows through pandas took minutes for 1.2M blind calls at paper scale.
    group = blind.groupby(["item_id", "run"], observed=True, sort=True).ngroup().to_numpy()
    # within a group the calls go in the paper's order of the orders (_order_key), ties in file order:
    # one stable sort of every row by (group, rank of its order), not a sort per group
    order_codes, order_ids = pd.factorize(blind["order_id"].astype(str))
    keys = [_order_key(str(o)) for o in order_ids]
    rank = np.empty(len(keys), dtype=np.int64)
    rank[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
    order = np.lexsort((rank[order_codes], group))
    order = order[group[order] >= 0]  # -1: a row whose key is missing, which groupby leaves out
    if order.size == 0:
        return out
    slots = blind["picked_slot"] if "picked_slot" in blind else pd.Series([None] * len(blind))
    # each column's distinct values converted once (a scalar conversion per call was most of this loop)
    o = _per_row(blind["order_id"], str, order)
    p = _per_row(blind["picked_option"], int, order, missing=None)  # a failed call has no pick
    c = _per_row(blind["correct"], bool, order, missing=False)  # nor a verdict
    s = _per_row(blind["parse_status"], str, order)
    k = _per_row(slots, _plain, order, missing=None)  # the displayed slot picked: a model that keeps to
    # one slot answers by position
    calls = [{"o": a, "p": b, "c": v, "s": t, "k": q} for a, b, v, t, q in zip(o, p, c, s, k, strict=True)]
    item_ids, runs = blind["item_id"].tolist(), blind["run"].tolist()
    bounds = [0, *(np.flatnonzero(np.diff(group[order])) + 1).tolist(), order.size]
    for lo, hi in itertools.pairwise(bounds):
        first = int(order[lo])
        out.setdefault(str(item_ids[first]), {})[str(runs[first])] = calls[lo:hi]
    return out


_CONVERTED = object()  # a missing value goes through the conversion too


def _per_row(values: pd.Series, convert: Any, order: np.ndarray, missing: Any = _CONVERTED) -> list[Any]:
    """``convert`` of the value of each row in ``order`` (``missing`` where it is missing, unless
    converted too), each distinct value converted once."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    table = [convert(u) for u in uniques]
    raw = values.to_numpy(dtype=object) if missing is _CONVERTED and (codes < 0).any() else None
    return [
        table[i] if i >= 0 else missing if raw is None else convert(raw[j])
        for i, j in zip(codes[order].tolist(), order.tolist(), strict=True)
    ]


# The prediction columns the explorer shows (``blind_picks``): the raw responses stay on disk.
PICK_COLUMNS = ("item_id", "model", "condition", "phrasing", "labels", "protocol", "reasoning", "order_id",
                "picked_option", "correct", "parse_status", "picked_slot")  # fmt: skip


def _read_picks(path: Path) -> pd.DataFrame:
    """The ``PICK_COLUMNS`` a predictions Parquet file has, in its own dtypes."""
    import pyarrow.parquet as pq

    present = set(pq.read_schema(path).names)
    return pd.read_parquet(path, columns=[c for c in PICK_COLUMNS if c in present])


def lexical_matches(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    lex = pd.read_parquet(path)
    keep = [
        "picked_option",
        "correct",
        "tie",
        "match_score",
        "match_act",
        "match_act_title",
        "match_ref",
        "match_title",
        "match_snippet",
        "match_issued",
    ]
    out: dict[str, dict[str, Any]] = {}
    for r in lex.to_dict(orient="records"):
        row = {k: _plain(r.get(k)) for k in keep if k in r}
        row["refs"] = [str(x) for x in r.get("option_match_refs", [])] if r.get("usable", True) else []
        row["scores"] = [round(float(x), 3) for x in r.get("option_scores", [])]
        out[str(r["item_id"])] = row
    return out


def _plain(value: Any) -> Any:
    """A JSON-ready scalar (numpy types; NaN and pandas' NA -> None: a failed call has no pick)."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    if isinstance(value, float):
        return round(value, 3)
    return value


def surface_strategies(path: Path) -> dict[str, list[str]]:
    """item -> the surface strategies (Table 2) whose one extreme option is its key.

    A property of the item: the constant slots are left out (where the keys sit is a fact about the
    bank, reported once in its profile, and some slot holds every item's key), and so is a tie that
    merely contains the key (credit below 1)."""
    if not path.exists():
        return {}
    picks = pd.read_parquet(path)
    sure = picks["credit"].astype(float) >= 1.0 if "credit" in picks else picks["correct"].astype(bool)
    if "tie" in picks:
        sure &= ~picks["tie"].astype(bool)
    right = picks[sure & ~picks["strategy"].astype(str).str.startswith("constant_")]
    return {str(k): sorted(map(str, g["strategy"])) for k, g in right.groupby("item_id", observed=True)}


def _majority(n: int, total: int) -> bool:
    return total > 0 and 2 * n > total


def model_leaks(calls: list[dict[str, Any]]) -> str | None:
    """How one model answers an item blind, over its rotations and reversals.

    ``"content"``: it picks the key in more than half the orders, wherever the key is shown, so something
    in the options gives the key away. ``"position habit"``: not that, yet it picks the key at least once
    and more than half its picks fall on one displayed slot, so it is right where the key happens to sit
    under its favourite slot. ``None``: neither (never right, or right without a majority either way).
    """
    answered = [c for c in calls if c.get("p") is not None]
    right = sum(bool(c.get("c")) for c in answered)
    if _majority(right, len(calls)):
        return "content"
    slots = [c["k"] for c in answered if c.get("k") is not None]
    top = max((slots.count(s) for s in set(slots)), default=0)
    if right and _majority(top, len(calls)):
        return "position habit"
    return None


def leak_tags(
    strategies: list[str], lexical: dict[str, Any] | None, picks: dict[str, list[dict[str, Any]]]
) -> tuple[list[str], dict[str, str]]:
    """The leak types the explorer filters on, and per model run its leak (``model_leaks``).

    ``surface: <strategy>`` for each content strategy (``surface_strategies``) whose pick is the key,
    ``lexical`` when the statute search picks the key without a tie (Table 2's ``lexical_search``: the
    same fact, one tag), ``model: <run> (content)`` for each model run that picks the key in most orders
    wherever it is shown. An item with none of these has no leak. A run
    right only where its favourite slot holds the key (``position habit``) is listed in ``runs`` but is
    no leak of the item: that is the model's habit meeting the bank's key positions."""
    # lexical search is Table 2's strategy too: one tag, whichever file says it picks the key
    tags = [f"surface: {s}" for s in strategies if s != LEXICAL]
    if LEXICAL in strategies or (lexical and lexical.get("correct") and not lexical.get("tie")):
        tags.append("lexical")
    runs = {run: kind for run, calls in picks.items() if (kind := model_leaks(calls))}
    tags += [f"model: {run} (content)" for run, kind in runs.items() if kind == "content"]
    return tags, runs


def item_rows(
    items: list[Item],
    gate: GateResult,
    picks: dict[str, dict[str, list[dict[str, Any]]]],
    lexical: dict[str, dict[str, Any]],
    strategies: dict[str, list[str]],
) -> list[dict[str, Any]]:
    accepted, rejected = set(gate.accepted), set(gate.rejected)
    counts = gate.counts
    ids = counts["item_id"].tolist() if "item_id" in counts else []
    solved = dict(zip(ids, counts["solved"].tolist() if "solved" in counts else [], strict=False))
    n_orders = dict(zip(ids, counts["n_orders"].tolist() if "n_orders" in counts else [], strict=False))
    rows = []
    for item in items:
        tags, leak_runs = leak_tags(strategies.get(item.id, []), lexical.get(item.id), picks.get(item.id, {}))
        decision = "accepted" if item.id in accepted else "rejected" if item.id in rejected else "not gated"
        rows.append(
            {
                "id": item.id,
                "bank": item.bank,
                "number": item.number,
                "status": item.status,
                "flags": list(item.flags),
                "question": item.question,
                "options": list(item.options),
                "key": item.key,
                "gate": decision,
                "solved": _plain(solved.get(item.id)),
                "orders": _plain(n_orders.get(item.id)),
                "lengths": [chars(o) for o in item.options],  # as Table 2 and the bank profile measure
                "words": [words(o) for o in item.options],
                "picks": picks.get(item.id, {}),
                "lexical": lexical.get(item.id),
                "strategies": strategies.get(item.id, []),
                "leaks": tags,
                "leakRuns": leak_runs,
            }
        )
    return rows


def write_html_report(
    out_dir: str | Path,
    *,
    items_path: str | Path,
    predictions_path: str | Path | Sequence[str | Path],
    gate_path: str | Path,
    baselines_dir: str | Path,
    analysis_dir: str | Path,
    title: str = "blindmcq report",
    conclusions: str | None = None,
    conclusions_title: str = "What this run shows",
) -> Path:
    """Write ``out_dir/index.html`` (+ ``assets/``, ``figures/``); returns the path of ``index.html``.

    ``predictions_path`` may list several files (e.g. the probe's and a separate gate model's calls).
    ``conclusions``: the Markdown of the section the run's ``report.md`` opens with (``conclusions_title``);
    the page opens with it too.
    """
    out, analysis, baselines = Path(out_dir), Path(analysis_dir), Path(baselines_dir)
    items = read_items(_required(Path(items_path)))
    sources = [predictions_path] if isinstance(predictions_path, str | Path) else list(predictions_path)
    predictions = pd.concat([_read_picks(_required(Path(p))) for p in sources], ignore_index=True)
    gate = read_gate(_required(Path(gate_path)))  # the one gate.json reader
    rows = item_rows(
        items,
        gate,
        blind_picks(predictions),
        lexical_matches(baselines / "lexical.parquet"),
        surface_strategies(baselines / "picks.parquet"),
    )
    # the rule as the gate applied it: a fixed k, or k chosen per option count N (``describe_thresholds``)
    settings = {"gate_model": gate.gate_model, "k": gate.k, "orders": gate.orders,
                "rule": gate.describe_thresholds()}  # fmt: skip
    data = {"items": rows, "gate": {**settings, "retained_share": gate.retained_share}}
    (out / "assets").mkdir(parents=True, exist_ok=True)
    for name in ASSETS:
        write_text(out / "assets" / name, _template(name))
    values = {
        "TITLE": html.escape(title),
        "CONCLUSIONS": conclusions_html(conclusions, conclusions_title),
        "TABLES": tables_html(analysis_tables(analysis)),
        "FIGURES": figures_html(copy_figures(analysis, out)),
        "DATA": script_json(data),
    }
    # one pass, so a placeholder-like text inside the data is never substituted again
    page = re.sub(r"\{\{([A-Z]+)\}\}", lambda m: values[m.group(1)], _template("report.html"))
    index = out / "index.html"
    write_text(index, page)
    return index


def report_from_results(out_dir: str | Path, root: Path = Path(".")) -> Path:
    """The HTML report of the pipeline's outputs under ``root/results/`` (the ``report`` stage's call)."""
    from blindmcq import paths

    gate_predictions = root / paths.GATE_DIR / "predictions.parquet"
    findings = root / paths.ANALYSIS_DIR / "findings.md"  # what report.md opens with ("What this run shows")
    return write_html_report(
        out_dir,
        items_path=root / paths.ITEMS,
        predictions_path=[
            root / paths.PREDICTIONS,
            *([gate_predictions] if gate_predictions.exists() else []),
        ],
        gate_path=root / paths.GATE_DIR / "gate.json",
        baselines_dir=root / paths.BASELINES_DIR,
        analysis_dir=root / paths.ANALYSIS_DIR,
        conclusions=findings.read_text(encoding="utf-8") if findings.exists() else None,
    )
