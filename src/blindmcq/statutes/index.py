"""Provisions file -> BM25 index folder (the ``statutes`` stage), and loading it back with its analyzer.

The corpus is analysed word form by word form: each document becomes an array of word-form ids, and each
distinct form is lemmatised once, so the morphology runs on a few hundred thousand forms instead of tens
of millions of tokens.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

from blindmcq.statutes.bm25 import EPSILON, K1, B, BM25Index, counts_matrix
from blindmcq.statutes.corpus import FIELDS, Provision, read_provisions
from blindmcq.statutes.text import STOPWORDS_UK, Analyzer, Lemmatizer, TextConfig, tokenize


def analyse_documents(documents: Iterable[str], analyzer: Analyzer) -> tuple[list[np.ndarray], list[str]]:
    """Term-id arrays (one per document) and the vocabulary, identical to ``analyzer`` on each text."""
    form_ids: dict[str, int] = {}
    docs: list[np.ndarray] = []
    for text in documents:
        words = tokenize(text)
        ids = (form_ids.setdefault(w, len(form_ids)) for w in words)
        docs.append(np.fromiter(ids, np.int64, count=len(words)))
    forms = list(form_ids)
    lemmas = analyzer.lemmatizer.lemmas(forms) if analyzer.lemmatizer else forms
    term_ids: dict[str, int] = {}
    drop = STOPWORDS_UK if analyzer.config.stopwords else frozenset()
    form_to_term = np.fromiter(
        (-1 if t in drop else term_ids.setdefault(t, len(term_ids)) for t in lemmas), np.int64, len(lemmas)
    )
    cols = []
    for doc in docs:
        terms = form_to_term[doc]
        cols.append(terms[terms >= 0] if drop else terms)
    return cols, list(term_ids)


def provisions_frame(provisions: Sequence[Provision]) -> pd.DataFrame:
    return pd.DataFrame([p.to_json() for p in provisions], columns=list(FIELDS))


def _sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def build_index(
    provisions: Sequence[Provision],
    text: TextConfig | None = None,
    *,
    k1: float = K1,
    b: float = B,
    epsilon: float = EPSILON,
    analyzer: Analyzer | None = None,
) -> BM25Index:
    """Index provisions (heading + body each) under ``text``; the config is kept in the index metadata."""
    text = text or TextConfig()
    analyzer = analyzer or Analyzer(text)
    cols, vocab = analyse_documents((p.document for p in provisions), analyzer)
    meta = {
        "text": text.to_json(),
        "pymorphy3": version("pymorphy3"),
        "pymorphy3_dicts_uk": version("pymorphy3-dicts-uk"),
    }
    tf = counts_matrix(cols, len(vocab))
    return BM25Index(tf, vocab, provisions_frame(provisions), k1=k1, b=b, epsilon=epsilon, meta=meta)


def build_statute_index(
    source: str | Path,
    out_dir: str | Path,
    text: TextConfig | None = None,
    *,
    acts: Iterable[str] | None = None,
    k1: float = K1,
    b: float = B,
    epsilon: float = EPSILON,
) -> BM25Index:
    """The ``statutes`` stage: read provisions (JSONL, .jsonl.xz or text-act folder), index, save."""
    text = text or TextConfig()
    source = Path(source)
    selected = None if acts is None else set(acts)
    provisions = read_provisions(source, selected)
    index = build_index(provisions, text, k1=k1, b=b, epsilon=epsilon)
    index.meta |= {
        "source": source.name,
        "source_sha256": _sha256(source),
        "acts": sorted(selected) if selected is not None else None,
        "n_acts": len({p.act for p in provisions}),
    }
    index.save(out_dir)
    return index


def load_statute_index(
    directory: str | Path, lemmatizer: Lemmatizer | None = None
) -> tuple[BM25Index, Analyzer]:
    """Load an index folder and the analyzer its documents were analysed with."""
    index = BM25Index.load(directory)
    return index, Analyzer(TextConfig.from_json(index.meta["text"]), lemmatizer)
