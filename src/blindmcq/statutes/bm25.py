"""BM25 index computing exactly rank_bm25.BM25Okapi's scores, as scipy sparse-matrix products.

rank_bm25 (0.2.2) BM25Okapi, which stays the reference (tests compare the two):
    idf(t)   = log(N - n_t + 0.5) - log(n_t + 0.5), n_t = documents containing t;
               a negative idf is replaced by epsilon * (mean idf over the whole vocabulary)
    score(d) = sum over query tokens q (repeats count) of
               idf(q) * tf(q,d) * (k1 + 1) / (tf(q,d) + k1 * (1 - b + b * |d| / avgdl))
    tokens absent from the corpus add 0; the best document is the first argmax (numpy's rule).
Here the per-(document, term) weights are precomputed once (terms x documents, CSR: each term's postings
and weights contiguous); a query adds its terms' postings into one dense score vector, in ascending term
order, so every score is the same float sum a sparse product ``counts @ weights`` gives. The few terms in
a large share of the documents are also kept as dense rows (one vector add instead of a scatter).

On disk (`save`/`load`, written all-or-nothing): ``tf.npz`` (raw term counts, documents x terms),
``vocab.json`` (term of each column), ``meta.json`` (parameters, sizes, caller metadata) and, when given,
``provisions.parquet`` (one row per document). Weights are recomputed on load from the counts.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from blindmcq.errors import InputError

FORMAT = "blindmcq-bm25/1"
K1, B, EPSILON = 1.5, 0.75, 0.25
# a term's postings go into a dense row when it is in more than this share of the documents (a dense
# vector add beats per-posting add.at there), for at most DENSE_BYTES of rows in all
DENSE_SHARE, DENSE_BYTES = 0.25, 64 * 2**20


def okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank_bm25 BM25Okapi IDF, including its floor for terms in more than half the documents."""
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    floor = epsilon * idf.mean() if len(idf) else 0.0
    return np.where(idf < 0, floor, idf)


class BM25Index:
    """Documents x terms BM25 weights; `scores`, `top` and batched `best_matches` over term lists."""

    def __init__(
        self,
        tf: sp.csr_matrix,
        vocab: Sequence[str],
        provisions: pd.DataFrame | None = None,
        *,
        k1: float = K1,
        b: float = B,
        epsilon: float = EPSILON,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if tf.shape[1] != len(vocab):
            raise ValueError(f"{tf.shape[1]} term columns but {len(vocab)} vocabulary entries")
        if tf.shape[0] == 0:
            raise ValueError("an index needs at least one document")
        if provisions is not None and len(provisions) != tf.shape[0]:
            raise ValueError(f"{tf.shape[0]} documents but {len(provisions)} provision rows")
        self.tf = tf.tocsr()
        self.vocab = list(vocab)
        self.term_ids = {t: i for i, t in enumerate(self.vocab)}
        self.provisions = provisions
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.meta = dict(meta or {})
        self.doc_len = np.asarray(self.tf.sum(axis=1)).ravel().astype(np.float64)
        self.avgdl = float(self.doc_len.mean())
        df = np.bincount(self.tf.indices, minlength=len(self.vocab)).astype(np.float64)
        self.idf = okapi_idf(df, self.n_docs, epsilon)
        self._weights_t = self._weights().T.tocsr()  # terms x documents: one row per query term
        self._dense = self._dense_rows()

    def _weights(self) -> sp.csr_matrix:
        tf = self.tf.astype(np.float64)
        rows = np.repeat(np.arange(self.n_docs), np.diff(tf.indptr))
        norm = self.k1 * (1 - self.b + self.b * self.doc_len[rows] / self.avgdl)
        data = self.idf[tf.indices] * tf.data * (self.k1 + 1) / (tf.data + norm)
        return sp.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)

    def _dense_rows(self) -> dict[int, np.ndarray]:
        wt = self._weights_t
        postings = np.diff(wt.indptr)
        frequent = np.flatnonzero(postings > DENSE_SHARE * self.n_docs)
        budget = DENSE_BYTES // (8 * self.n_docs)
        frequent = frequent[np.argsort(-postings[frequent], kind="stable")][:budget]
        rows = {}
        for t in frequent.tolist():
            row = np.zeros(self.n_docs, dtype=np.float64)
            a, b = wt.indptr[t], wt.indptr[t + 1]
            row[wt.indices[a:b]] = wt.data[a:b]
            rows[t] = row
        return rows

    def _term_counts(self, query: Sequence[str]) -> list[tuple[int, float]]:
        """The query's known terms in ascending id order and how often each occurs (a counts row)."""
        counts: dict[int, int] = {}
        term_ids = self.term_ids
        for token in query:
            t = term_ids.get(token)
            if t is not None:
                counts[t] = counts.get(t, 0) + 1
        return [(t, float(counts[t])) for t in sorted(counts)]

    def _score_into(self, scores: np.ndarray, query: Sequence[str], scratch: np.ndarray) -> None:
        """``scores`` := the query's BM25 scores, summed term by term in ascending id order: the float
        additions of row ``query`` of ``counts @ weights`` (scipy's csr product, from 0.0)."""
        wt, dense = self._weights_t, self._dense
        indptr, indices, data = wt.indptr, wt.indices, wt.data
        terms = self._term_counts(query)
        first = dense.get(terms[0][0]) if terms else None
        if first is None:
            scores.fill(0.0)
        else:  # 0.0 + x is x: the first dense row is written, not added to zeros
            np.multiply(first, terms[0][1], out=scores)
            terms = terms[1:]
        for t, c in terms:
            row = dense.get(t)
            if row is not None:
                if c == 1.0:
                    scores += row
                else:
                    np.multiply(row, c, out=scratch)
                    scores += scratch
                continue
            a, b = indptr[t], indptr[t + 1]
            # one addition per posting, in order: numpy's add.at beats gather-add-scatter (``s[i] += v``)
            np.add.at(scores, indices[a:b], data[a:b] if c == 1.0 else c * data[a:b])

    @property
    def n_docs(self) -> int:
        return int(self.tf.shape[0])

    @classmethod
    def build(
        cls,
        docs_tokens: Iterable[Sequence[str]],
        provisions: pd.DataFrame | None = None,
        **kwargs: Any,
    ) -> BM25Index:
        """Index already-analysed documents (one term list each); terms are numbered by first use."""
        ids: dict[str, int] = {}
        cols: list[np.ndarray] = []
        for tokens in docs_tokens:
            cols.append(np.fromiter((ids.setdefault(t, len(ids)) for t in tokens), np.int64))
        vocab = list(ids)
        return cls(counts_matrix(cols, len(vocab)), vocab, provisions, **kwargs)

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for one query (rank_bm25's ``get_scores``)."""
        scores = np.empty(self.n_docs, dtype=np.float64)
        self._score_into(scores, query, np.empty_like(scores))
        return scores

    def top(self, query: Sequence[str], k: int = 10) -> list[tuple[int, float]]:
        """The k best (document, score), best first; ties keep document order."""
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(int(i), float(scores[i])) for i in order]

    def best_matches(self, queries: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """For each query, the first best document and its score; one reused score vector, so memory
        does not grow with the number of queries."""
        best_idx = np.zeros(len(queries), dtype=np.int64)
        best_score = np.zeros(len(queries), dtype=np.float64)
        scores = np.empty(self.n_docs, dtype=np.float64)
        scratch = np.empty_like(scores)
        for q, query in enumerate(queries):
            self._score_into(scores, query, scratch)
            i = int(scores.argmax())
            best_idx[q], best_score[q] = i, scores[i]
        return best_idx, best_score

    def known_terms(self, query: Sequence[str]) -> int:
        """How many query tokens are in the vocabulary (0: every document scores 0)."""
        return sum(t in self.term_ids for t in query)

    def save(self, directory: str | Path) -> None:
        """Write the index folder all-or-nothing (a temporary folder renamed into place)."""
        meta = self.meta | {
            "format": FORMAT,
            "k1": self.k1,
            "b": self.b,
            "epsilon": self.epsilon,
            "n_docs": self.n_docs,
            "n_terms": len(self.vocab),
            "avgdl": self.avgdl,
        }
        with _atomic_dir(directory) as tmp:
            sp.save_npz(tmp / "tf.npz", self.tf, compressed=True)
            (tmp / "vocab.json").write_text(json.dumps(self.vocab, ensure_ascii=False), encoding="utf-8")
            (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8")
            if self.provisions is not None:
                self.provisions.to_parquet(tmp / "provisions.parquet", index=False, compression="zstd")

    @classmethod
    def load(cls, directory: str | Path) -> BM25Index:
        directory = Path(directory)
        meta_path = directory / "meta.json"
        if not meta_path.is_file():
            raise InputError("not a BM25 index folder (no meta.json)", file=str(directory))
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise InputError(f"index format {meta.get('format')!r}, expected {FORMAT}", file=str(meta_path))
        tf = sp.load_npz(directory / "tf.npz").tocsr()
        vocab = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
        prov_path = directory / "provisions.parquet"
        provisions = pd.read_parquet(prov_path) if prov_path.is_file() else None
        params = {k: meta.pop(k) for k in ("k1", "b", "epsilon")}
        for k in ("format", "n_docs", "n_terms", "avgdl"):
            meta.pop(k)
        try:
            return cls(tf, vocab, provisions, meta=meta, **params)
        except ValueError as exc:
            raise InputError(f"inconsistent index: {exc}", file=str(directory)) from exc


def counts_matrix(cols: Sequence[np.ndarray], n_terms: int) -> sp.csr_matrix:
    """Rows x terms count matrix from one array of term ids per row (duplicates summed)."""
    lengths = np.fromiter((len(c) for c in cols), np.int64, count=len(cols))
    rows = np.repeat(np.arange(len(cols)), lengths)
    data = np.ones(int(lengths.sum()), dtype=np.int32)
    flat = np.concatenate(cols) if len(cols) else np.zeros(0, np.int64)
    matrix = sp.csr_matrix((data, (rows, flat)), shape=(len(cols), n_terms))
    matrix.sum_duplicates()
    return matrix


class _atomic_dir:
    """Context manager: yields a temporary folder beside ``target``; on success it replaces ``target``."""

    def __init__(self, target: str | Path) -> None:
        self.target = Path(target)

    def __enter__(self) -> Path:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.", dir=self.target.parent))
        self.tmp.chmod(0o755)  # mkdtemp makes it private; the index is an ordinary output
        return self.tmp

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        old = None
        if self.target.exists():
            old = self.target.with_name(f".{self.target.name}.old-{os.getpid()}")
            os.replace(self.target, old)
        os.replace(self.tmp, self.target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
