import ast
import json
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.auditing.profile import pointer_kind, profile_bank
from blindmcq.datasets.customs import load_customs
from blindmcq.datasets.items import Item
from blindmcq.datasets.lexam import load_lexam
from blindmcq.surface import chars


@pytest.fixture(scope="module")
def lexam(shared_data: Path) -> list[Item]:
    return load_lexam(shared_data / "lexam" / "MCQs_test.xlsx")


@pytest.fixture(scope="module")
def customs(shared_data: Path) -> list[Item]:
    return load_customs(shared_data / "ua-customs-exam" / "questions.json")


def test_lexam_profile_1660_items_no_option_over_33_characters(lexam, shared_data):
    profile = profile_bank(lexam)
    assert profile["n_items"] == profile["n_usable"] == 1660
    assert profile["n_options_distribution"] == {4: 1660}
    assert profile["option_chars"]["max"] == 33
    assert profile["share_options_longer"] == 0.0
    assert profile["pointer_share"] == 1.0  # every option points into the stem
    raw = pd.read_excel(shared_data / "lexam" / "MCQs_test.xlsx")["choices"]
    assert profile["n_options_total"] == sum(len(ast.literal_eval(c)) for c in raw)


def test_customs_profile_key_first_on_1079_items_and_longer_keys(customs, shared_data):
    raw = json.loads((shared_data / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))
    every = [r for v in raw["legislation"].values() for r in v] + [
        r for c in raw["operational_competencies"].values() for v in c["levels"].values() for r in v
    ]
    profile = profile_bank(customs)
    assert profile["n_items"] == len(every) == 2950
    assert profile["key_slot_counts"][0] == sum(r["correct_index"] == 0 for r in every) == 1079
    assert sum(profile["key_slot_counts"]) == profile["n_usable"] == 2949  # one item has no marked key
    assert round(profile["key_chars_mean"]) == 73 and round(profile["distractor_chars_mean"]) == 55
    assert profile["key_minus_distractor_chars"] == pytest.approx(
        profile["key_chars_mean"] - profile["distractor_chars_mean"]
    )
    assert profile["pointer_share"] < 0.02  # propositions, not pointers
    assert profile["share_options_longer"] > 0.5


@pytest.mark.parametrize(
    ("option", "kind"),
    [
        ("i und iii", "roman_list"),
        ("i, ii, iii, und iv", "roman_list"),
        ("ii and iv", "roman_list"),
        ("nur ii", "roman_list"),
        ("iv", "roman_list"),
        ("A and B", "letter_reference"),
        ("А і Б", "letter_reference"),
        ("only C", "letter_reference"),
        ("keine der Aussagen", "none_of_the_above"),
        ("none of the statements", "none_of_the_above"),
        ("None of the above.", "none_of_the_above"),
        ("weder A noch B", "none_of_the_above"),
        ("правильна відповідь відсутня", "none_of_the_above"),
        ("всі відповіді неправильні", "none_of_the_above"),
        ("All of the above", "all_of_the_above"),
        ("всі відповіді правильні", "all_of_the_above"),
        ("все вищеперераховане", "all_of_the_above"),
        ("унітарною державою", None),
        ("Вищий антикорупційний суд", None),
        ("за жодних обставин", None),
        ("A", None),
        ("", None),
    ],
)
def test_pointer_kinds(option, kind):
    assert pointer_kind(option) == kind


def item(number: int, options: tuple[str, ...], key: int | None, status: str = "ok") -> Item:
    return Item(f"t-b-{number}", "t", "b", number, "q", options, key, status=status)  # type: ignore[arg-type]


def test_hand_counted_profile_of_a_mixed_n_bank():
    bank = [
        item(1, ("aaaa", "bb"), 0),  # key 4 chars, distractor 2
        item(2, ("c", "dd d", "e", "f"), 1),  # key 4, distractors 1, 1, 1
        item(3, ("xyz", "i and ii"), None, status="malformed"),  # lengths count, key stats do not
    ]
    profile = profile_bank(bank)
    assert profile["n_items"] == 3 and profile["n_usable"] == 2
    assert profile["n_options_distribution"] == {2: 2, 4: 1}
    assert profile["key_chars_mean"] == 4 and profile["distractor_chars_mean"] == pytest.approx(5 / 4)
    assert profile["key_slot_counts"] == [1, 1, 0, 0]
    assert profile["option_chars"]["max"] == 8 and profile["option_words"]["max"] == 3
    assert profile["pointer_share"] == pytest.approx(1 / 8)
    assert profile["chance"] == pytest.approx((1 / 2 + 1 / 4) / 2)


def test_profiles_of_the_two_banks(lexam, customs):
    lex, cus = profile_bank(lexam), profile_bank(customs)
    assert lex["n_items"] == 1660 and cus["key_slot_counts"][0] == 1079
    assert lex["option_chars"]["max"] == 33 and lex["share_options_longer"] == 0.0
    lengths = [chars(o) for item in customs for o in item.options]
    assert cus["share_options_longer"] == pytest.approx(sum(n > 33 for n in lengths) / len(lengths))


def test_profiles_of_the_real_samples_hold_the_banks_known_shapes(samples: Path):
    lexam = profile_bank(load_lexam(samples / "lexam" / "MCQs_test.xlsx"))
    assert lexam["n_items"] == lexam["n_usable"] == 40 and lexam["option_chars"]["max"] <= 33
    assert lexam["pointer_share"] == 1.0
    raw = json.loads((samples / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))
    every = [r for v in raw["legislation"].values() for r in v] + [
        r for c in raw["operational_competencies"].values() for v in c["levels"].values() for r in v
    ]
    customs = profile_bank(load_customs(samples / "ua-customs-exam" / "questions.json"))
    assert customs["n_items"] == len(every) and customs["n_usable"] == len(every) - 1  # q00452 has no key
    assert customs["key_slot_counts"][0] == sum(r["correct_index"] == 0 for r in every)
