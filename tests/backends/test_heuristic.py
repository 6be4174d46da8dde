from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.heuristic import HeuristicBackend
from blindmcq.config.schema import HeuristicModel, model_config
from blindmcq.errors import ConfigError, InputError

OPTIONS = [
    "митний контроль",  # 15 chars, 2 words
    "так",  # shortest
    "декларант подає митну декларацію до митного органу",  # longest, most words
    "один два три чотири п'ять",  # 5 words, shorter than the longest
]
LATIN = ("A", "B", "C", "D")


def ask(cfg: dict[str, Any], options: list[str] = OPTIONS, **kw: Any) -> str:
    extra = {"option_texts": options, "item_id": "t-1", **kw.pop("extra", {})}
    user, choices = kw.pop("user", "…"), kw.pop("choices", LATIN)
    req = ModelRequest(model="h", system=None, user=user, choices=choices, extra=extra, **kw)
    return HeuristicBackend(model_config({"backend": "heuristic", **cfg})).complete(req).text


@pytest.mark.parametrize(
    ("cfg", "label"),
    [
        ({"strategy": "constant", "slot": 0}, "A"),
        ({"strategy": "constant", "slot": 3}, "D"),
        ({"strategy": "longest"}, "C"),
        ({"strategy": "shortest"}, "B"),
        ({"strategy": "most_words"}, "C"),
    ],
)
def test_strategies_pick_the_expected_slot(cfg: dict[str, Any], label: str) -> None:
    assert ask(cfg) == label


def test_ties_are_broken_at_random_among_the_tied_slots_seeded_by_the_option_texts() -> None:
    # the draw follows the seed and the option texts alone, so vary the seed
    longest = [ask({"strategy": "longest", "seed": i}, ["ab", "cd", "e", "fg"]) for i in range(200)]
    shortest = [ask({"strategy": "shortest", "seed": i}, ["abc", "d", "e", "fgh"]) for i in range(200)]
    assert set(longest) == {"A", "B", "D"} and set(shortest) == {"B", "C"}
    assert 0.2 < longest.count("A") / 200 < 0.47  # about 1/3 each, not all to the earliest slot
    again = [ask({"strategy": "longest", "seed": i}, ["ab", "cd", "e", "fg"], user="x") for i in range(200)]
    assert again == longest  # another question text, the same presentation: the same break
    cyrillic = [
        ask({"strategy": "longest", "seed": i}, ["ab", "cd", "e", "fg"], choices=("А", "Б", "В", "Г"))
        for i in range(200)
    ]
    assert ["ABCD"["АБВГ".index(c)] for c in cyrillic] == longest  # other labels: the same slot
    shown, reordered = ["ab", "cd", "e", "fg"], ["fg", "e", "ab", "cd"]
    moved = [ask({"strategy": "longest", "seed": i}, reordered) for i in range(200)]
    text = [reordered["ABCD".index(c)] for c in moved]
    assert text == [shown["ABCD".index(c)] for c in longest]  # another order: the same option


def test_the_wire_names_the_tie_rule_and_the_answer_reports_the_tied_slots() -> None:
    req = ModelRequest(
        model="h", system=None, user="…", choices=("A", "B"), extra={"option_texts": ["ab", "cd"]}
    )
    backend = HeuristicBackend(HeuristicModel(strategy="longest"))
    assert backend.wire_request(req)["tie_break"] == "uniform, seeded by the sorted option texts"
    assert backend.complete(req).meta["tied"] == [0, 1]


def test_labels_come_from_extra_when_no_choices() -> None:
    text = ask({"strategy": "longest"}, choices=(), extra={"label_strings": ["А", "Б", "В", "Г"]})
    assert text == "В"


def test_dash_labels_answer_with_the_option_text() -> None:
    assert ask({"strategy": "shortest"}, choices=("-", "-", "-", "-")) == "так"


def test_random_is_seeded_per_request_and_roughly_uniform() -> None:
    picks = [ask({"strategy": "random", "seed": 7}, user=f"q{i}") for i in range(400)]
    again = [ask({"strategy": "random", "seed": 7}, user=f"q{i}") for i in range(400)]
    other = [ask({"strategy": "random", "seed": 8}, user=f"q{i}") for i in range(400)]
    assert picks == again
    assert picks != other
    counts = Counter(picks)
    assert set(counts) == set(LATIN) and min(counts.values()) > 60


def test_missing_option_texts_names_the_item() -> None:
    req = ModelRequest(model="h", system=None, user="…", choices=LATIN, extra={"item_id": "customs-7"})
    with pytest.raises(InputError, match="customs-7"):
        HeuristicBackend(HeuristicModel(strategy="longest")).complete(req)


def test_label_count_must_match_options() -> None:
    with pytest.raises(InputError, match="3 labels for 4 options"):
        ask({"strategy": "longest"}, choices=("A", "B", "C"))


def test_bad_strategy_and_slot_name_the_key() -> None:
    with pytest.raises(ConfigError, match="'strategy'"):
        HeuristicBackend(model_config({"strategy": "cleverest"}, HeuristicModel))
    with pytest.raises(ConfigError, match="'slot'"):
        ask({"strategy": "constant", "slot": 5})


def test_name_distinguishes_settings() -> None:
    names = {
        HeuristicBackend(model_config(cfg, HeuristicModel)).name
        for cfg in (
            {"strategy": "constant", "slot": 0},
            {"strategy": "constant", "slot": 1},
            {"strategy": "random", "seed": 0},
            {"strategy": "random", "seed": 1},
            {"strategy": "longest"},
        )
    }
    assert len(names) == 5
