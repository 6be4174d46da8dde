"""Full-scale BM25 benchmark: this index against rank_bm25.BM25Okapi and bm25s on the same terms, in one run.

Usage: python benchmarks/bench_bm25.py [--source PROVISIONS] [--bank questions.json] [--sample 50]

Times: reading the corpus; lemmatiser speed uncached and cached; the index build (tokenising,
lemmatising, weights); save and load; the option queries of the whole customs bank (2,950 items x 4
options). rank_bm25 scores a seeded random sample of the same queries (its per-query loop is too slow
for all of them) and its per-query time is extrapolated; its scores are checked against ours on that
sample. Finally the lexical-search baseline on the whole bank. Wall-clock figures depend on the machine
and on its load; say which when quoting them.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import bm25s
import numpy as np
from _report import full_input, result  # run as a script: benchmarks/ is on sys.path
from rank_bm25 import BM25Okapi

from blindmcq.datasets.customs import load_customs
from blindmcq.statutes.bm25 import BM25Index
from blindmcq.statutes.corpus import read_provisions
from blindmcq.statutes.index import build_index
from blindmcq.statutes.lexical import lexical_search, summarise
from blindmcq.statutes.text import Analyzer, Lemmatizer, tokenize

SOURCE = "ua-legislation/provisions.jsonl.xz"
BANK = "ua-customs-exam/questions.json"


class Clock:
    """Wall-clock and CPU seconds of a block; on a shared machine the CPU figure is the steadier one."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __enter__(self) -> Clock:
        self.start, self.start_cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self.start
        self.cpu = time.process_time() - self.start_cpu
        print(f"{self.label:<52} wall {self.seconds:8.2f} s   cpu {self.cpu:8.2f} s", flush=True)


def lemmatiser_speed(documents: list[str]) -> None:
    words = [w for doc in documents for w in tokenize(doc)]
    distinct = list(dict.fromkeys(words))
    lem = Lemmatizer()
    with Clock(f"lemmatise {len(distinct):,} distinct forms, uncached") as uncached:
        for w in distinct:
            lem.lemma(w)
    with Clock(f"lemmatise {len(words):,} tokens, cached") as cached:
        lem.lemmas(words)
    print(f"lemmatiser: uncached {len(distinct) / uncached.cpu:,.0f} words/s, ", end="")
    print(f"cached {len(words) / cached.cpu:,.0f} words/s (per CPU second)")


def doc_terms(index: BM25Index) -> list[list[str]]:
    """Each document's terms as a bag (order is irrelevant to BM25), for rank_bm25."""
    tf = index.tf
    return [
        [index.vocab[t] for t, c in zip(tf.indices[a:b], tf.data[a:b], strict=True) for _ in range(c)]
        for a, b in zip(tf.indptr[:-1], tf.indptr[1:], strict=True)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # the full inputs from data/ (make data) or ../shared/data, wherever the checkout sits
    parser.add_argument("--source", type=Path, default=full_input(SOURCE))
    parser.add_argument("--bank", type=Path, default=full_input(BANK))
    parser.add_argument("--sample", type=int, default=50, help="queries timed on rank_bm25")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for flag, path, rel in (("--source", args.source, SOURCE), ("--bank", args.bank, BANK)):
        if path is None or not path.is_file():
            parser.error(f"{flag}: {path or rel} not found (run `make data`, or pass {flag})")
    print(f"machine: {os.cpu_count()} CPUs (shared with other jobs; wall-clock figures are indicative)")

    with Clock("read corpus") as read:
        provisions = read_provisions(args.source)
    print(f"provisions: {len(provisions):,} of {len({p.act for p in provisions}):,} acts")
    lemmatiser_speed([p.document for p in random.Random(args.seed).sample(provisions, 2000)])

    with Clock("build index (tokenise + lemmatise + weights)") as build:
        index = build_index(provisions)
    print(f"index: {index.n_docs:,} documents, {len(index.vocab):,} terms, {index.tf.nnz:,} nonzeros")
    with TemporaryDirectory() as tmp:
        with Clock("save index"):
            index.save(Path(tmp) / "index")
        size = sum(f.stat().st_size for f in (Path(tmp) / "index").iterdir())
        print(f"index on disk: {size / 1e6:.1f} MB")
        with Clock("load index"):
            index = BM25Index.load(Path(tmp) / "index")

    items = load_customs(args.bank)
    analyzer = Analyzer(lemmatizer=Lemmatizer())
    with Clock(f"analyse {sum(i.n_options for i in items):,} option queries") as analyse:
        queries = [analyzer(o) for item in items for o in item.options]
    with Clock(f"best match for {len(queries):,} queries") as search:
        best_idx, _ = index.best_matches(queries)
    ours = len(queries) / (analyse.cpu + search.cpu)
    print(f"this index: {ours:,.0f} queries per CPU second (analysis + search)")

    with Clock("rank_bm25 BM25Okapi build (same terms)"):
        reference = BM25Okapi(doc_terms(index))
    sample = sorted(random.Random(args.seed).sample(range(len(queries)), args.sample))
    with Clock(f"rank_bm25 get_scores, {args.sample} sampled queries") as ref_clock:
        ref_scores = [reference.get_scores(queries[q]) for q in sample]
    ref_per_query = ref_clock.cpu / len(sample)
    our_per_query = search.cpu / len(queries)
    rel = max(
        float(np.max(np.abs(r - index.scores(queries[q])) / np.maximum(np.abs(r), 1e-12)))
        for q, r in zip(sample, ref_scores, strict=True)
    )
    same_top = sum(int(np.argmax(r)) == best_idx[q] for q, r in zip(sample, ref_scores, strict=True))
    print(
        f"rank_bm25: {ref_per_query:.3f} CPU s/query; all {len(queries):,} queries, extrapolated from the",
        end="",
    )
    print(f" sample: {ref_per_query * len(queries) / 60:.0f} CPU min")
    print(
        f"this index: {our_per_query * 1e3:.2f} CPU ms/query; speed-up {ref_per_query / our_per_query:,.0f}x"
    )
    print(
        f"agreement on the sample: max relative score difference {rel:.1e}, same top {same_top}/{len(sample)}"
    )
    terms = doc_terms(index)
    with Clock("bm25s build (same terms)"):
        peer = bm25s.BM25(method="robertson", k1=index.k1, b=index.b)
        peer.index(terms, show_progress=False)
    peer_sample = sorted(random.Random(args.seed).sample(range(len(queries)), min(len(queries), 500)))
    with Clock(f"bm25s get_scores, {len(peer_sample)} sampled queries") as peer_clock:
        peer_best = [int(np.argmax(peer.get_scores(list(queries[q])))) for q in peer_sample]
    peer_per_query = peer_clock.cpu / len(peer_sample)
    peer_top = sum(b == best_idx[q] for q, b in zip(peer_sample, peer_best, strict=True))
    print(
        f"bm25s: {peer_per_query * 1e3:.2f} CPU ms/query; this index {peer_per_query / our_per_query:,.1f}x "
        f"faster; same top {peer_top}/{len(peer_sample)}"
    )
    result(
        "bm25",
        f"{our_per_query * 1e3:.2f} CPU-ms/query, scores = rank-bm25 to {rel:.0e}",
        f"bm25s {peer_per_query * 1e3:.2f}, rank-bm25 {ref_per_query * 1e3:.0f} CPU-ms/query",
        peer_per_query / our_per_query,
        f"{ref_per_query / our_per_query:,.0f}x rank-bm25",
    )
    total, total_cpu = (
        sum(getattr(c, a) for c in (read, build, analyse, search)) for a in ("seconds", "cpu")
    )
    print(f"read + build + all queries: wall {total:.1f} s, cpu {total_cpu:.1f} s")

    with Clock("lexical search, whole bank"):
        picks = lexical_search(items, index, analyzer, seed=0)
    legislation = {i.id for i in items if i.meta.get("part") == "legislation"}
    parts = (("whole bank", picks), ("legislation part", picks[picks["item_id"].isin(legislation)]))
    for name, rows in parts:
        s = summarise(rows)
        print(
            f"lexical accuracy, {name}: {s.accuracy:.3f} [{s.ci_low:.3f}, {s.ci_high:.3f}] "
            f"n={s.n} ties={s.ties} expected={s.expected_accuracy:.3f} chance={s.chance:.2f}"
        )


if __name__ == "__main__":
    main()
