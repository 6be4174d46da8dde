"""Matching: exact and normalised matches, containment, embedding ties and thresholds (fake embedder)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from blindmcq.config.schema import validate_group
from blindmcq.errors import ConfigError
from blindmcq.protocols.embeddings import CachedEmbedder
from blindmcq.protocols.md import MDConfig, MDMatcher, make_md_matcher

OPTIONS = ("федеративною державою", "конфедеративною державою", "унітарною державою", "республікою")


class FakeEmbedder:
    """Fixed unit vectors per text; unknown texts raise, so a test sees every text embedded."""

    name = "fake"

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = {k: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for k, v in vectors.items()}
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 3), np.float32)


class NoEmbedder:
    name = "none"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError(f"embeddings were not needed: {texts}")


def matcher(embedder: object, **overrides: object) -> MDMatcher:
    return MDMatcher(MDConfig(**overrides), embedder)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "slot", "method"),
    [
        ("Остаточна відповідь: унітарною державою", 2, "exact"),
        ("Остаточна відповідь: «Унітарною державою».", 2, "exact"),
        ("Відповідь: - Республікою", 3, "exact"),
        ("Остаточна відповідь: Україна за устроєм є унітарною державою.", 2, "contained"),
        # "федеративною державою" is inside "конфедеративною державою" only as a word part: no match.
        ("Остаточна відповідь: вона є конфедеративною державою.", 1, "contained"),
    ],
)
def test_text_matches_need_no_embeddings(response: str, slot: int, method: str) -> None:
    result = matcher(NoEmbedder()).match(response, OPTIONS)
    assert (result.slot, result.status, result.method) == (slot, "ok", method)
    assert result.similarity is None


def test_sub_option_inside_a_longer_matched_option_is_discarded() -> None:
    options = ("i and iii", "iii", "i, ii, and iii", "ii")
    result = matcher(NoEmbedder()).match("Final answer: statements i, ii and iii are correct.", options)
    assert (result.slot, result.method) == (2, "contained")


def test_duplicate_options_are_a_tie() -> None:
    result = matcher(NoEmbedder()).match("Final answer: митниці", ("митниці", "митні пости", "Митниці"))
    assert (result.slot, result.status, result.candidates) == (None, "tie", (0, 2))


def test_containment_can_be_switched_off() -> None:
    fake = FakeEmbedder({"it is ii.": [0, 1, 0], "i": [1, 0, 0], "ii": [0.1, 1, 0]})
    on = matcher(NoEmbedder()).match("Final answer: it is ii.", ("i", "ii"))
    off = matcher(fake, containment=False, threshold=0.5).match("Final answer: it is ii.", ("i", "ii"))
    assert (on.method, off.method) == ("contained", "embedding")
    assert on.slot == off.slot == 1


def test_embedding_picks_the_most_similar_option() -> None:
    fake = FakeEmbedder({"a single state": [1, 0.1, 0], "federal": [0, 1, 0], "unitary": [1, 0, 0]})
    result = matcher(fake, threshold=0.5).match("Final answer: a single state", ("federal", "unitary"))
    assert (result.slot, result.status, result.method) == (1, "ok", "embedding")
    assert result.similarity == pytest.approx(1 / np.sqrt(1.01), abs=1e-6)
    assert result.similarities is not None and result.similarities[0] == pytest.approx(
        0.1 / np.sqrt(1.01), abs=1e-6
    )


def test_equal_best_scores_are_a_tie_with_both_candidates() -> None:
    fake = FakeEmbedder({"both": [1, 1, 0], "x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]})
    result = matcher(fake, threshold=0.5).match("Final answer: both", ("x", "y", "z"))
    assert (result.slot, result.status, result.candidates) == (None, "tie", (0, 1))


def test_tie_epsilon_widens_the_tie() -> None:
    fake = FakeEmbedder({"ans": [1, 0.98, 0], "x": [1, 0, 0], "y": [0, 1, 0]})
    strict = matcher(fake, threshold=0.5).match("Final answer: ans", ("x", "y"))
    loose = matcher(fake, threshold=0.5, tie_epsilon=0.05).match("Final answer: ans", ("x", "y"))
    assert (strict.status, strict.slot) == ("ok", 0)
    assert (loose.status, loose.slot, loose.candidates) == ("tie", None, (0, 1))


def test_below_threshold_is_uncertain_and_keeps_the_best_candidate() -> None:
    fake = FakeEmbedder({"ans": [1, 0.3, 0.1], "x": [0.2, 0, 1], "y": [0, 0.3, 1]})
    low = matcher(fake, threshold=0.9).match("Final answer: ans", ("x", "y"))
    assert (low.slot, low.status, low.method) == (None, "uncertain", "embedding")
    assert low.candidates == (0,) and low.similarity is not None and low.similarity < 0.9
    high = matcher(fake, threshold=low.similarity).match("Final answer: ans", ("x", "y"))
    assert (high.slot, high.status) == (0, "ok")


def test_blank_option_never_wins() -> None:
    fake = FakeEmbedder({"ans": [1, 0, 0], "x": [0, 1, 0]})
    result = matcher(fake, threshold=-1.0).match("Final answer: ans", ("", "x"))
    assert result.slot == 1 and result.similarities == (-1.0, 0.0)


def test_empty_response_is_unparseable() -> None:
    assert matcher(NoEmbedder())("", OPTIONS) == (None, "unparseable")


def test_match_many_embeds_once_and_keeps_order() -> None:
    fake = FakeEmbedder({"p": [1, 0, 0], "q": [0, 1, 0], "x": [1, 0.1, 0], "y": [0, 1, 0.1]})
    cached = CachedEmbedder(fake)
    results = matcher(cached, threshold=0.5).match_many(
        ["Final answer: q", "Final answer: y", "Final answer: p"], [("x", "y"), ("x", "y"), ("x", "y")]
    )
    assert [(r.slot, r.method) for r in results] == [(1, "embedding"), (1, "exact"), (0, "embedding")]
    assert len(fake.calls) == 1 and sorted(fake.calls[0]) == ["p", "q", "x", "y"]
    matcher(cached, threshold=0.5).match("Final answer: q", ("x", "y"))
    assert len(fake.calls) == 1  # everything came from the cache


def test_make_md_matcher_is_the_parsing_callable() -> None:
    md = make_md_matcher(validate_group("protocol", {"name": "md", "threshold": 0.5}), embedder=NoEmbedder())
    assert md("Відповідь: республікою", OPTIONS) == (3, "ok")
    assert md.match("Відповідь: республікою", OPTIONS).slot == 3


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"threshold": "high"}, "protocol.threshold"),
        ({"threshold": 1.5}, "protocol.threshold"),
        ({"tie_epsilon": -1}, "protocol.tie_epsilon"),
        ({"final_answer_regex": "Answer: (.*)"}, "protocol.final_answer_regex"),
        ({"final_answer_regex": "("}, "protocol.final_answer_regex"),
        ({"embedder_role": "doc"}, "protocol.embedder_role"),
        ({"embedder": ""}, "protocol.embedder"),
        ({"containment": "yes"}, "protocol.containment"),
    ],
)
def test_bad_config_names_the_key(cfg: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        make_md_matcher(validate_group("protocol", {"name": "md", **cfg}))


def test_pronoun_i_is_not_the_pointer_i() -> None:
    options = ("i", "ii", "iii", "none of the statements")
    response = "Having checked every statement, I conclude: only statement iii is correct."
    result = matcher(NoEmbedder()).match(response, options)
    assert (result.slot, result.method) == (2, "contained")
