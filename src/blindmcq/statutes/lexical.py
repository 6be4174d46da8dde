"""Lexical search over statutes (SPEC, Table 2): pick the option whose best BM25 match scores highest.

Each option (without the stem) is one query. Its best score is the top BM25 score over all provisions.
Options whose best scores are equal (relative tolerance ``tie_rtol``) are tied; by default a tie is
broken uniformly at random, seeded per item (seed, item id), because breaking it towards the first option
would inherit the bank's key-position skew. ``expected_accuracy`` gives the tie-free alternative: a tie
earns 1/(number tied) when the key is among the tied options. An option none of whose terms occur in the
corpus scores 0 and has no matched provision.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.atomic import atomic_path
from blindmcq.config.schema import LexicalModel, default
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import InputError
from blindmcq.stats import wilson
from blindmcq.statutes.bm25 import BM25Index
from blindmcq.statutes.index import load_statute_index
from blindmcq.statutes.text import Analyzer
from blindmcq.vocabulary import TieBreak

_SEGMENT_RE = re.compile(r"(?<=[.;:!?])\s+|\n+")


def _snippet(text: str, query_terms: set[str], analyzer: Analyzer, max_chars: int) -> str:
    """The sentence or line of ``text`` sharing the most distinct terms with the query, shortened."""
    segments = [s.strip() for s in _SEGMENT_RE.split(text) if s.strip()] or [text]
    best = max(segments, key=lambda s: len(query_terms & set(analyzer(s))))
    return best if len(best) <= max_chars else best[: max_chars - 1].rstrip() + "…"


def pick_best(
    scores: np.ndarray, item_id: str, seed: int, tie_rtol: float, tie_break: TieBreak
) -> tuple[int, list[int]]:
    """(the option picked, the options tied at the best score); ties broken by ``tie_break``."""
    best = scores.max()
    tied = [i for i, s in enumerate(scores) if np.isclose(s, best, rtol=tie_rtol, atol=0.0)]
    if len(tied) == 1 or tie_break == "first":
        return tied[0], tied
    rng = np.random.default_rng([seed, zlib.crc32(item_id.encode("utf-8"))])
    return int(rng.choice(tied)), tied


TIE_BREAK: TieBreak = default(LexicalModel, "tie_break")  # the lexical model's, unless told


def lexical_search(
    items: Sequence[Item],
    index: BM25Index,
    analyzer: Analyzer,
    *,
    seed: int,
    tie_break: TieBreak = TIE_BREAK,
    tie_rtol: float = default(LexicalModel, "tie_rtol"),
    snippet_chars: int = 240,
) -> pd.DataFrame:
    """One row per item: the pick, whether it is the key, ties, per-option scores, the matched provision."""
    if index.provisions is None:
        raise InputError("the index has no provisions table; rebuild it with provisions")
    queries = [analyzer(option) for item in items for option in item.options]
    best_idx, best_score = index.best_matches(queries)
    matched = np.array([index.known_terms(q) > 0 for q in queries], dtype=bool)
    prov = index.provisions
    rows: list[dict[str, Any]] = []
    start = 0
    for item in items:
        span = slice(start, start + item.n_options)
        start += item.n_options
        scores, docs, has_match = best_score[span], best_idx[span], matched[span]
        if not item.options:  # a malformed item kept as published: nothing to pick
            rows.append({"item_id": item.id, "n_options": 0, "key": item.key, "usable": item.usable})
            continue
        picked, tied = pick_best(scores, item.id, seed, tie_rtol, tie_break)
        refs = [
            f"{prov.at[d, 'act']} {prov.at[d, 'ref']}" if m else None
            for d, m in zip(docs, has_match, strict=True)
        ]
        row: dict[str, Any] = {
            "item_id": item.id,
            "n_options": item.n_options,
            "key": item.key,
            "usable": item.usable,
            "picked_option": picked,
            "correct": item.key is not None and picked == item.key,
            "tie": len(tied) > 1,
            "tied_options": tied,
            "option_scores": [float(s) for s in scores],
            "option_match_refs": refs,
            "match_score": float(scores[picked]),
        }
        doc = int(docs[picked])
        if has_match[picked]:
            terms = set(queries[span.start + picked])
            row |= {f"match_{c}": prov.at[doc, c] for c in ("act", "act_title", "ref", "issued", "title")}
            row["match_snippet"] = _snippet(prov.at[doc, "text"], terms, analyzer, snippet_chars)
        else:
            row |= dict.fromkeys(
                ("match_act", "match_act_title", "match_ref", "match_issued", "match_title", "match_snippet")
            )
        rows.append(row)
    return pd.DataFrame(rows).astype({"picked_option": "Int64", "correct": "boolean", "tie": "boolean"})


@dataclass(frozen=True)
class LexicalSummary:
    """Accuracy of the lexical pick on usable items, with its 95% Wilson interval."""

    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    expected_accuracy: float  # ties credited 1/(number tied) when the key is among them
    ties: int
    no_match: int  # items where no option shares a term with the corpus
    chance: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarise(picks: pd.DataFrame, confidence: float = 0.95) -> LexicalSummary:
    """Summarise a `lexical_search` table over its usable rows."""
    usable = picks[picks["usable"]]
    if usable.empty:
        raise InputError("no usable items to summarise")
    n, k = len(usable), int(usable["correct"].sum())
    ci_low, ci_high = wilson(k, n, confidence)
    pairs = zip(usable["key"], usable["tied_options"], strict=True)
    credit = [(key in tied) / len(tied) for key, tied in pairs]
    return LexicalSummary(
        n=n,
        correct=k,
        accuracy=k / n,
        ci_low=ci_low,
        ci_high=ci_high,
        expected_accuracy=float(np.mean(credit)),
        ties=int(usable["tie"].sum()),
        no_match=int(usable["option_match_refs"].map(lambda refs: all(r is None for r in refs)).sum()),
        chance=float((1.0 / usable["n_options"]).mean()),
    )


def lexical_baseline(
    items_path: str | Path,
    index_dir: str | Path,
    out_path: str | Path | None = None,
    *,
    seed: int,
    tie_break: TieBreak = TIE_BREAK,
) -> tuple[pd.DataFrame, LexicalSummary]:
    """The ``baselines`` stage's lexical row: items.jsonl + index folder -> picks (Parquet) + summary."""
    index, analyzer = load_statute_index(index_dir)
    picks = lexical_search(read_items(items_path), index, analyzer, seed=seed, tie_break=tie_break)
    if out_path is not None:
        with atomic_path(out_path) as tmp:
            picks.to_parquet(tmp, index=False)
    return picks, summarise(picks)
