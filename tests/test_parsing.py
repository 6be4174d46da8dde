from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelResponse
from blindmcq.config.files import load_group, load_label_schemes
from blindmcq.config.schema import Labels
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError
from blindmcq.labels import label_symbols_by_scheme
from blindmcq.tasks import parsing
from blindmcq.tasks.parsing import Parsed, parse_answer
from blindmcq.tasks.presentations import Presentation, present

CORPUS = Path(__file__).parent / "fixtures" / "responses" / "parse_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SYMBOLS = label_symbols_by_scheme(load_label_schemes())  # the shipped schemes, as a stage reads them


def interpret(p: Presentation, response: ModelResponse, **kwargs: Any) -> Parsed:  # the shipped schemes
    return parsing.interpret(p, response, symbols=SYMBOLS, **kwargs)


def test_symbols_come_from_the_schemes_handed_in() -> None:
    assert set(SYMBOLS) == {"latin", "cyrillic", "numerals"}  # the dash is uniform: md reads it
    custom = {
        "greek": Labels(name="greek", symbols=["α", "β", "γ"]),
        "dash": Labels(name="dash", symbols=["-"], uniform=True),
    }
    assert label_symbols_by_scheme(custom) == {"greek": ["α", "β", "γ"]}
    p = shown()
    assert parsing.interpret(p, ModelResponse(text="B"), symbols=SYMBOLS) == Parsed(None, "other_scheme", "B")
    # without latin among the schemes handed in, a latin B is not told from noise
    own = {"cyrillic": SYMBOLS["cyrillic"]}
    assert parsing.interpret(p, ModelResponse(text="B"), symbols=own) == Parsed(None, "unparseable", None)


def test_corpus_is_broad() -> None:
    assert len(ROWS) >= 40
    statuses = Counter(r["expected_status"] for r in ROWS)
    assert {"ok", "refused", "unparseable", "other_scheme"} <= set(statuses)
    assert {r["scheme"] for r in ROWS} == {"latin", "cyrillic", "numerals"}


@pytest.mark.parametrize("row", ROWS, ids=[r["note"] for r in ROWS])
def test_corpus(row: dict) -> None:
    got = parse_answer(row["text"], row["scheme"], row["n"], symbols=SYMBOLS)
    assert got == Parsed(row["expected_slot"], row["expected_status"], row["expected_label"])


def test_homoglyphs_are_told_apart_by_code_point() -> None:
    latin_b, cyrillic_ve = "B", "В"
    assert latin_b != cyrillic_ve
    assert parse_answer(cyrillic_ve, "cyrillic", 4, symbols=SYMBOLS) == Parsed(2, "ok", "В")
    assert parse_answer(latin_b, "cyrillic", 4, symbols=SYMBOLS) == Parsed(None, "other_scheme", "B")
    assert parse_answer(latin_b, "latin", 4, symbols=SYMBOLS) == Parsed(1, "ok", "B")
    assert parse_answer(cyrillic_ve, "latin", 4, symbols=SYMBOLS) == Parsed(None, "other_scheme", "В")


def test_final_answer_line_wins_over_reasoning() -> None:
    text = "Варіант А? Ні.\nВаріант Г? Теж ні.\nВаріант Б підходить.\nВідповідь: Б"
    assert parse_answer(text, "cyrillic", 4, symbols=SYMBOLS).slot == 1
    assert parse_answer(text.rsplit("\n", 1)[0], "cyrillic", 4, symbols=SYMBOLS).status == "unparseable"


def test_unknown_and_uniform_schemes_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="greek"):
        parse_answer("A", "greek", 4, symbols=SYMBOLS)
    with pytest.raises(ConfigError, match="dash"):
        parse_answer("- text", "dash", 4, symbols={**SYMBOLS, "dash": ["-", "-"]})
    with pytest.raises(ConfigError, match="dash"):
        parse_answer("- text", "dash", 4, symbols=SYMBOLS)


ITEM = Item(id="t-b-1", source="t", bank="b", number=1, question="Q?", options=("a", "b", "c", "d"), key=2)


def shown(protocol: str = "sl", labels: str = "cyrillic"):
    return present(
        ITEM,
        condition="blind",
        order_id="rev0",
        order=(3, 2, 1, 0),
        prompt=load_group("prompt", "original"),
        labels=load_group("labels", labels),
        reasoning=load_group("reasoning", "direct"),
        protocol=protocol,
    )


def test_interpret_passes_backend_failures_through() -> None:
    p = shown()
    assert interpret(p, ModelResponse(text="", status="error", error="boom")) == Parsed(None, "error", None)
    assert interpret(p, ModelResponse(text="Б", status="refused")) == Parsed(None, "refused", None)


def test_interpret_text_and_scores() -> None:
    p = shown()
    assert interpret(p, ModelResponse(text="**Відповідь: Б**")) == Parsed(1, "ok", "Б")
    assert interpret(p, ModelResponse(text="B")) == Parsed(None, "other_scheme", "B")
    scored = ModelResponse(text="", choice_logprobs=[-3.0, -0.2, -1.5, -9.0])
    assert interpret(p, scored) == Parsed(1, "ok", "Б")
    tied = ModelResponse(text="", choice_logprobs=[-1.0, -2.0, -1.0, -3.0])
    assert interpret(p, tied) == Parsed(None, "tie", None)
    nan = ModelResponse(text="", choice_logprobs=[float("nan"), -1.0, -2.0, -3.0])
    assert interpret(p, nan).status == "error"
    with pytest.raises(ValueError, match="t-b-1"):
        interpret(p, ModelResponse(text="", choice_logprobs=[-1.0, -2.0]))


def test_interpret_matched_and_dashed_uses_the_matcher() -> None:
    p = shown("md", "dash")
    seen = []

    def matcher(text: str, options) -> tuple[int | None, str]:
        seen.append((text, tuple(options)))
        return 2, "ok"

    assert interpret(p, ModelResponse(text="Відповідь: b."), md_matcher=matcher) == Parsed(2, "ok", None)
    assert seen == [("Відповідь: b.", ("d", "c", "b", "a"))]
    with pytest.raises(ConfigError, match="md_matcher"):
        interpret(p, ModelResponse(text="x"))


def test_the_dash_is_never_an_other_scheme_answer() -> None:
    assert "dash" not in SYMBOLS
    with_dash = {**SYMBOLS, "dash": ["-"]}
    assert parse_answer("- не знаю -", "latin", 4, symbols=with_dash) == Parsed(None, "unparseable", None)


@pytest.mark.parametrize(
    "answer",
    ["answer{s}B", "Відповідь:{s}Б", "option{s}x", "A{s}\n{s}answer{s}C", "{s}(D){s}", "I{s}cannot answer"],
)
def test_a_long_run_of_whitespace_reads_as_one_space(answer: str) -> None:
    """An answer padded with thousands of spaces (or newlines) parses as the same answer with one: each
    run is one character before any label pattern sees it, so none of them backtracks over the run
    (8,000 spaces after "option" took 26 s before)."""
    short, padded = answer.format(s=" "), answer.format(s=" \t" * 20_000)
    cleaned = parsing._clean(padded)
    assert "  " not in cleaned and len(cleaned) <= len(short) + 2
    for scheme in ("latin", "cyrillic"):
        assert parse_answer(padded, scheme, 4, symbols=SYMBOLS) == parse_answer(
            short, scheme, 4, symbols=SYMBOLS
        )
