"""The closed word lists (``blindmcq.vocabulary``): each defined once, and the records, the config schema
and the readers use those definitions."""

from __future__ import annotations

import typing
from dataclasses import fields

import pytest

from blindmcq import vocabulary as v
from blindmcq.answers.records import PredictionRecord
from blindmcq.backends.base import ModelResponse
from blindmcq.config.schema import Condition, GenericDataset, LocalModel, validate_group
from blindmcq.datasets.generic import FORMATS, HF_FORMAT
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError


def _hint(cls: type, name: str) -> object:
    return typing.get_type_hints(cls)[name]


def test_the_frozen_records_type_their_fields_with_the_vocabulary() -> None:
    assert _hint(Item, "status") == v.ItemStatus
    assert _hint(PredictionRecord, "condition") == v.Condition
    assert _hint(PredictionRecord, "parse_status") == v.ParseStatus
    assert _hint(PredictionRecord, "protocol") == v.AnswerProtocol
    assert PredictionRecord.__dataclass_params__.frozen and Item.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert _hint(ModelResponse, "status") == v.CallStatus
    assert {f.name for f in fields(PredictionRecord)} >= {"condition", "parse_status"}


def test_the_config_schema_types_conditions_and_formats_with_the_vocabulary() -> None:
    assert _hint(Condition, "conditions") == list[v.Condition]
    assert _hint(GenericDataset, "format") == v.BankFormat | None
    assert _hint(GenericDataset, "key_format") == v.KeyFormat | None
    assert _hint(LocalModel, "scoring") == v.Scoring and _hint(LocalModel, "cloze_norm") == v.ClozeNorm
    assert validate_group("condition", {}).conditions == list(v.CONDITIONS)


def test_the_subsets_are_drawn_from_their_lists() -> None:
    assert set(v.FAILED_STATUSES) <= set(v.PARSE_STATUSES)
    assert set(v.CALL_STATUSES) <= set(v.PARSE_STATUSES)  # a failed call's status is its row's
    assert set(v.HEADERLESS_FORMATS) <= set(v.BANK_FORMATS)
    # every format the suffixes name, plus the save_to_disk folder, and nothing else
    assert set(FORMATS.values()) | {HF_FORMAT} == set(v.BANK_FORMATS)


def test_a_word_outside_a_list_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="conditions"):
        validate_group("condition", {"conditions": ["deaf"]})
    with pytest.raises(ConfigError, match="format"):
        validate_group("dataset", {"loader": "generic", "format": "docx"})
    with pytest.raises(ValueError, match="status"):
        from blindmcq.backends.base import response_from_dict

        response_from_dict({"text": "", "status": "maybe"})


def test_no_module_spells_a_list_again() -> None:
    """The tuples of words are written only in ``vocabulary.py``."""
    import re
    from pathlib import Path

    package = Path(v.__file__).parent
    spelled = {
        "conditions": re.compile(r"""[(\[]\s*["']blind["'],\s*["']full["']\s*[)\]]"""),
        "item statuses": re.compile(
            r"""["']ok["'],\s*["']excluded["'],\s*["']malformed["'],\s*["']disputed["']"""
        ),
        "bank formats": re.compile(r"""["']parquet["'],\s*["']xlsx["'],\s*["']hf["']"""),
    }
    found = [
        f"{path.relative_to(package)}: {what}"
        for path in package.rglob("*.py")
        if path.name != "vocabulary.py"
        for what, pattern in spelled.items()
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert not found, found


def spelled_lists(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of each literal tuple, list or set of two or more words that holds exactly the
    words of one of ``vocabulary``'s lists (``("error", "refused")`` is ``FAILED_STATUSES``)."""
    import ast

    lists = {
        name: frozenset(words)
        for name, words in vars(v).items()
        if name.isupper() and isinstance(words, tuple) and len(words) > 1
    }
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) > 1:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                words = frozenset(e.value for e in node.elts)  # type: ignore[attr-defined]
                out += [(node.lineno, name) for name, listed in lists.items() if words == listed]
    return out


# Literals that hold a list's words but mean something else: each says what.
NOT_THE_LIST = {
    # the languages of the matcher's answer fixtures (tests/fixtures/md_answers), not of the prompts
    "benchmarks/bench_md_matcher.py": {"PROMPT_LANGUAGES"},
}


def test_no_module_script_or_benchmark_spells_a_list_as_a_literal() -> None:
    from pathlib import Path

    root = Path(v.__file__).resolve().parents[2]
    found = [
        f"{path.relative_to(root).as_posix()}:{line}: {name}"
        for folder in ("src", "benchmarks", "scripts")
        for path in sorted((root / folder).rglob("*.py"))
        if path.name != "vocabulary.py"
        for line, name in spelled_lists(path.read_text(encoding="utf-8"))
        if name not in NOT_THE_LIST.get(path.relative_to(root).as_posix(), set())
    ]
    assert found == [], "import it from blindmcq.vocabulary:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ('x = status in ("error", "refused")', ["FAILED_STATUSES"]),
        ('for c in ["full", "blind"]: ...', ["CONDITIONS"]),
        ('x = {"sl", "md"}', ["ANSWER_PROTOCOLS"]),
        ('x = ("csv", "tsv")', []),  # a part of a list is another thing (the delimited formats)
        ("x = CONDITIONS", []),
    ],
)
def test_the_walk_finds_a_spelled_list(code: str, found: list[str]) -> None:
    assert [name for _, name in spelled_lists(code)] == found
