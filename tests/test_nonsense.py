"""NonsenseQA: determinism, key distribution, item validity, skewed few-shot prompts, explicit bias."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from blindmcq.config.files import load_group
from blindmcq.config.schema import validate_group
from blindmcq.datasets.items import Item, read_items, validate_item, write_items
from blindmcq.datasets.nonsense import (
    fewshot_block,
    generate_nonsenseqa,
    key_at,
    names_pattern,
    skew_slots,
    ukrainian_words,
)


@pytest.fixture(scope="module")
def bank():
    return generate_nonsenseqa(seed=0)


def test_sizes_ids_and_validity(bank) -> None:
    assert (len(bank.test), len(bank.fewshot)) == (1000, 100)
    assert bank.test[0].id == "nonsenseqa-test-1" and bank.fewshot[-1].id == "nonsenseqa-fewshot-100"
    for item in bank.test + bank.fewshot:
        validate_item(item)
        assert item.usable and item.source == "nonsenseqa" and item.n_options == 4
        assert item.question.endswith("?") and len(set(item.options)) == 4


def test_words_come_from_the_dictionary_list(bank) -> None:
    words = set(ukrainian_words())
    assert len(words) > 1000
    for item in bank.test[:50]:
        assert set(item.question.rstrip("?").lower().split()) <= words
        assert all(set(o.split()) <= words for o in item.options)


def test_same_seed_same_bank_other_seed_other_bank(bank) -> None:
    again = generate_nonsenseqa(seed=0)
    assert [i.to_json() for i in again.test + again.fewshot] == [
        i.to_json() for i in bank.test + bank.fewshot
    ]
    other = generate_nonsenseqa(seed=1, n_test=20, n_fewshot=5)
    assert [i.question for i in other.test] != [i.question for i in bank.test[:20]]


def test_keys_are_uniform(bank) -> None:
    for items in (bank.test, generate_nonsenseqa(seed=3).test):
        counts = np.bincount([i.key for i in items], minlength=4)
        assert chisquare(counts).pvalue > 0.01


def test_written_like_any_bank(bank, tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    assert write_items(path, bank.test + bank.fewshot) == 1100
    assert read_items(path) == bank.test + bank.fewshot


def test_custom_word_list_and_option_count() -> None:
    words = [f"w{i}" for i in range(40)]
    small = generate_nonsenseqa(seed=5, n_test=30, n_fewshot=3, n_options=10, words=words)
    assert all(i.n_options == 10 and 0 <= i.key < 10 for i in small.test)
    assert small.test[0].meta["words"] == "custom"


@pytest.mark.parametrize(
    ("n", "skew", "expected"),
    [
        (10, "all_a", {0: 10}),
        (10, "a70", {0: 7, 1: 1, 2: 1, 3: 1}),
        (20, "a70", {0: 14, 1: 2, 2: 2, 3: 2}),
        (8, "uniform", {0: 2, 1: 2, 2: 2, 3: 2}),
    ],
)
def test_skewed_answer_distribution_is_exact(n: int, skew: str, expected: dict[int, int]) -> None:
    slots = skew_slots(n, skew, 4, seed=11)  # type: ignore[arg-type]
    assert dict(Counter(slots)) == expected
    assert skew_slots(n, skew, 4, seed=11) == slots  # type: ignore[arg-type]


def test_uniform_remainder_is_spread() -> None:
    counts = np.bincount(skew_slots(5, "uniform", 4, seed=2), minlength=4)
    assert counts.sum() == 5 and counts.max() - counts.min() == 1


def test_key_at_keeps_distractor_order() -> None:
    item = Item("x-y-1", "x", "y", 1, "q?", ("a", "b", "c", "d"), key=2)
    assert [key_at(item, s) for s in range(4)] == [
        ("c", "a", "b", "d"),
        ("a", "c", "b", "d"),
        ("a", "b", "c", "d"),
        ("a", "b", "d", "c"),
    ]


def test_fewshot_block_sl_puts_keys_where_asked(bank) -> None:
    block = fewshot_block(
        bank.fewshot,
        skew="a70",
        labels=validate_group("labels", load_group("labels", "latin")),
        n_shots=10,
        seed=4,
    )
    examples = {i.id: i for i in bank.fewshot}
    parts = block.text.split("\n\n")
    assert len(parts) == 10 and Counter(block.key_slots) == {0: 7, 1: 1, 2: 1, 3: 1}
    for part, item_id, slot in zip(parts, block.item_ids, block.key_slots, strict=True):
        lines = part.splitlines()
        item = examples[item_id]
        assert lines[0] == f"Question: {item.question}"
        assert lines[1 + slot] == f"{'ABCD'[slot]}) {item.options[item.key]}"
        assert lines[-1] == f"Answer: {'ABCD'[slot]}"


def test_fewshot_block_md_style(bank) -> None:
    dash = validate_group("labels", load_group("labels", "dash"))
    block = fewshot_block(bank.fewshot, skew="all_a", labels=dash, n_shots=3, seed=1, language="uk")
    examples = {i.id: i for i in bank.fewshot}
    for part, item_id in zip(block.text.split("\n\n"), block.item_ids, strict=True):
        lines = part.splitlines()
        key_text = examples[item_id].options[examples[item_id].key]
        assert lines[1] == f"- {key_text}" and all(line.startswith("- ") for line in lines[1:5])
        assert lines[-1] == f"Остаточна відповідь: правильний варіант — «{key_text}»."
    assert str(block) == block.text


def test_fewshot_block_refuses_too_many_shots(bank) -> None:
    with pytest.raises(ValueError, match="only 100 examples"):
        fewshot_block(
            bank.fewshot,
            skew="uniform",
            labels=validate_group("labels", load_group("labels", "latin")),
            n_shots=101,
            seed=0,
        )


@pytest.mark.parametrize(
    "text",
    [
        "Based on the previous examples, the answer is always A.",
        "Following the pattern in the examples, I choose A.",
        "In all the examples the answer was A, so A.",
        "Усі відповіді в прикладах — А, тому обираю А.",
        "Як і в попередніх прикладах, правильна відповідь А.",
        "Відповідь завжди перша.",
    ],
)
def test_names_pattern_detects_explicit_bias(text: str) -> None:
    assert names_pattern(text)


@pytest.mark.parametrize(
    "text",
    ["A", "The answer is B.", "Остаточна відповідь: правильний варіант — «жабеня».", "Відповідь: В", ""],
)
def test_names_pattern_ignores_plain_answers(text: str) -> None:
    assert not names_pattern(text)


def test_nonsense_help_explains_every_option_and_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from blindmcq.cli.nonsense import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    options = text[text.index("options:") :]
    entries = re.split(r"\n  (?=-)", options)[1:]
    assert len(entries) == 14  # -h and the 13 options
    for entry in entries:
        if entry.startswith("-h"):
            continue
        words = " ".join(entry.split())
        assert "(default:" in words and "None)" not in words, words
        assert len(words.split("(default:")[0].split()) >= 4, words  # a help text, not just the flag
