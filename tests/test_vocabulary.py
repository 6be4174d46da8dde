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
