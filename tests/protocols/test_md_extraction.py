"""Extraction of the final answer from real-shaped answer texts (Ukrainian and English)."""

from __future__ import annotations

import pytest

from blindmcq.protocols.md import extract_final_answer, last_sentence, match_form


@pytest.mark.parametrize(
    ("text", "expected", "how"),
    [
        (
            "Згідно зі статтею 2 Конституції, Україна не є федерацією.\n"
            "Остаточна відповідь: За державним устроєм Україна — унітарна держава.",
            "За державним устроєм Україна — унітарна держава.",
            "regex",
        ),
        ("Відповідь: митні пости", "митні пости", "regex"),
        ("**Остаточна відповідь:** - Митниці", "- Митниці", "regex"),
        (
            "Statement iii is accurate.\nFinal answer: The incorrect statements are i and ii.",
            "The incorrect statements are i and ii.",
            "regex",
        ),
        ("**Final answer**: ii and iv apply.", "ii and iv apply.", "regex"),
        ("Final answer:\nStatements i and ii are correct.", "Statements i and ii are correct.", "regex"),
        # The last instructed line wins over an earlier draft answer.
        ("Answer: i\nOn reflection that is wrong.\nFinal answer: ii", "ii", "regex"),
        # No instructed form: the last sentence; abbreviations such as "ст. 2" do not split it.
        (
            "Питання про устрій. Відповідно до ст. 2 Конституції Україна є унітарною державою.",
            "Відповідно до ст. 2 Конституції Україна є унітарною державою.",
            "last_sentence",
        ),
        ("Spain came first. So the answer is option ii.", "So the answer is option ii.", "last_sentence"),
        ("   \n  ", "", "empty"),
        ("", "", "empty"),
    ],
)
def test_extract_final_answer(text: str, expected: str, how: str) -> None:
    assert extract_final_answer(text) == (expected, how)


def test_last_sentence_uses_last_line() -> None:
    assert last_sentence("Reasoning here. More.\n\nConclusion: iv.\n") == "Conclusion: iv."


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("«Унітарною  державою».", "унітарною державою"),
        ("- Кабінетом Міністрів України", "кабінетом міністрів україни"),
        ("i, ii, and iv", "I, II and IV"),
        ("сім’ї", "сім'ї"),
        (
            "кримінальна, адміністративна та/або дисциплінарна",
            "Кримінальна адміністративна та або дисциплінарна",
        ),
    ],
)
def test_normalise_equates_surface_variants(a: str, b: str) -> None:
    assert match_form(a) == match_form(b)


def test_normalise_keeps_different_words_apart() -> None:
    assert match_form("i and iii") != match_form("ii and iii")
