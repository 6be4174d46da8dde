from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rank_bm25 import BM25Okapi

from blindmcq.errors import InputError
from blindmcq.statutes.bm25 import BM25Index, counts_matrix
from blindmcq.statutes.corpus import Provision
from blindmcq.statutes.index import build_index, build_statute_index, load_statute_index
from blindmcq.statutes.text import Analyzer, Lemmatizer, TextConfig


@pytest.fixture(scope="module")
def real_index(default_provisions: list[Provision], lemmatizer: Lemmatizer) -> BM25Index:
    return build_index(default_provisions, analyzer=Analyzer(lemmatizer=lemmatizer))


@pytest.fixture(scope="module")
def real_queries(customs_bank: Path, lemmatizer: Lemmatizer) -> list[list[str]]:
    """Options of the bank's legislation items, a seeded sample, analysed like the corpus."""
    bank = json.loads(customs_bank.read_text(encoding="utf-8"))
    options = [a["text"] for items in bank["legislation"].values() for item in items for a in item["answers"]]
    sample = random.Random(4).sample(options, 80)
    analyze = Analyzer(lemmatizer=lemmatizer)
    return [analyze(o) for o in sample]


@pytest.mark.slow
def test_agrees_with_rank_bm25_on_real_corpus_and_queries(
    real_index: BM25Index,
    default_provisions: list[Provision],
    real_queries: list[list[str]],
    lemmatizer: Lemmatizer,
) -> None:
    analyze = Analyzer(lemmatizer=lemmatizer)
    reference = BM25Okapi([analyze(p.document) for p in default_provisions])
    assert real_index.n_docs == reference.corpus_size
    assert real_index.avgdl == pytest.approx(reference.avgdl, rel=1e-12)
    assert any(reference.idf[t] == pytest.approx(reference.average_idf * 0.25) for t in ("і", "стаття"))
    best_idx, best_score = real_index.best_matches(real_queries)
    for q, query in enumerate(real_queries):
        expected = reference.get_scores(query)
        got = real_index.scores(query)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12)
        assert best_idx[q] == int(np.argmax(expected))
        assert best_score[q] == pytest.approx(expected.max(), rel=1e-6)
    assert len(set(best_idx.tolist())) > 20  # the sample is not degenerate


def test_scores_are_the_sparse_products_floats_bit_for_bit() -> None:
    """The per-query accumulation (dense rows for frequent terms, scatter-adds for the rest) adds the same
    floats in the same order as the sparse product counts @ weights, so every score is bit-identical."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(60)]
    p = 1 / np.arange(1, 61) ** 1.1  # a few terms in most documents (dense rows), a long tail (postings)
    docs = [list(rng.choice(words, size=rng.integers(0, 30), p=p / p.sum())) for _ in range(300)]
    index = BM25Index.build(docs)
    assert index._dense and len(index._dense) < len(index.vocab)  # both paths are exercised
    queries = [list(rng.choice([*words, "unknown"], size=rng.integers(0, 12))) for _ in range(200)]
    ids = index.term_ids  # queries x terms counts; words outside the vocabulary score 0
    cols = [np.fromiter((ids[t] for t in q if t in ids), np.int64) for q in queries]
    counts = counts_matrix(cols, len(ids))
    product = (counts.astype(np.float64) @ index._weights_t).toarray()
    best_idx, best_score = index.best_matches(queries)
    for q, query in enumerate(queries):
        assert index.scores(query).tobytes() == product[q].tobytes()
    np.testing.assert_array_equal(best_idx, product.argmax(axis=1))
    assert best_score.tobytes() == product[np.arange(len(queries)), best_idx].tobytes()


def test_okapi_idf_floor_and_repeated_query_terms() -> None:
    docs = [["a", "b"], ["a", "c", "c"], ["a", "d"], ["b"], []]
    index = BM25Index.build(docs)
    reference = BM25Okapi(docs)
    for query in (["a"], ["b", "b"], ["c", "zzz"], ["a", "b", "c", "d"], []):
        np.testing.assert_allclose(index.scores(query), reference.get_scores(query), rtol=1e-12, atol=1e-15)
    # "a" is in 3 of 5 documents: negative raw idf, floored at 0.25 x the mean raw idf
    assert (
        index.idf[index.term_ids["a"]]
        == pytest.approx(reference.idf["a"])
        == pytest.approx(0.25 * reference.average_idf)
    )


def test_unknown_terms_score_zero_and_top_is_ordered() -> None:
    index = BM25Index.build([["митний", "кодекс"], ["кодекс"], ["закон", "закон"]])
    assert not index.scores(["невідоме"]).any() and index.known_terms(["невідоме", "кодекс"]) == 1
    top = index.top(["кодекс", "митний"], k=2)
    assert [d for d, _ in top] == [0, 1] and top[0][1] > top[1][1] > 0
    idx, score = index.best_matches([["невідоме"], ["закон"]])
    assert idx.tolist() == [0, 2] and score[0] == 0.0 and score[1] > 0


def test_save_load_roundtrip_and_atomic_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provisions = pd.DataFrame({"act": ["x", "y"], "ref": ["art1", "art2"], "text": ["t1", "t2"]})
    index = BM25Index.build([["a", "b"], ["b", "c"]], provisions, k1=1.2, meta={"source": "s"})
    target = tmp_path / "index"
    index.save(target)
    loaded = BM25Index.load(target)
    assert loaded.vocab == index.vocab and loaded.k1 == 1.2 and loaded.meta == {"source": "s"}
    np.testing.assert_array_equal(loaded.scores(["b", "c"]), index.scores(["b", "c"]))
    pd.testing.assert_frame_equal(loaded.provisions, provisions)

    def broken(*_: object, **__: object) -> None:
        raise OSError("disk full")

    bigger = BM25Index.build([["a"], ["b"], ["c"]], pd.DataFrame({"act": ["p", "q", "r"]}))
    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError, match="disk full"):
        bigger.save(target)
    assert BM25Index.load(target).n_docs == 2  # the old index is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # no temporary folder left behind


def test_load_rejects_a_folder_that_is_not_an_index(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no meta\.json"):
        BM25Index.load(tmp_path)
    (tmp_path / "meta.json").write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"meta\.json.*format"):
        BM25Index.load(tmp_path)


def test_build_statute_index_from_text_acts(tmp_path: Path, lemmatizer: Lemmatizer) -> None:
    acts = tmp_path / "acts"
    acts.mkdir()
    (acts / "ua-law-1-1.txt").write_text(
        "Закон\nСтаття 1. Митний контроль\nМитні органи здійснюють митний контроль товарів.\n"
        "Стаття 2. Державна служба\nДержавні службовці виконують завдання держави.\n"
        "Стаття 3. Набрання чинності\nЦей Закон набирає чинності з дня опублікування.\n",
        encoding="utf-8",
    )
    built = build_statute_index(acts, tmp_path / "index", TextConfig(stopwords=True))
    index, analyzer = load_statute_index(tmp_path / "index", lemmatizer)
    assert analyzer.config == TextConfig(stopwords=True) and index.meta["n_acts"] == 1
    assert index.vocab == built.vocab and "митний" in index.vocab and "товарів" not in index.vocab
    assert index.top(analyzer("державний службовець"), k=1)[0][0] == 1
    assert list(index.provisions["ref"]) == ["art1", "art2", "art3"]
