"""PresentationSetup: the five presentation groups, typed, and the label schemes as one
frozen value; EngineSettings: how the calls are made, from the typed probe group."""

from __future__ import annotations

import dataclasses

import pytest

from blindmcq.config.files import load_group, load_label_schemes
from blindmcq.config.schema import (
    Condition,
    Config,
    Labels,
    Prompt,
    Protocol,
    Reasoning,
    validate,
    validate_group,
)
from blindmcq.errors import ConfigError
from blindmcq.tasks.probe import GROUPS, EngineSettings, PresentationSetup

SHIPPED = {"prompt": "original", "labels": "latin", "reasoning": "direct", "condition": "default",
           "protocol": "sl"}  # fmt: skip
CONFIG = Config(**{g: load_group(g, SHIPPED[g]) for g in GROUPS})


def test_from_params_types_the_five_composed_groups_and_the_schemes() -> None:
    setup = PresentationSetup.from_params(CONFIG, load_label_schemes())
    assert [getattr(setup, g).name for g in GROUPS] == [SHIPPED[g] for g in GROUPS]
    kinds = (Prompt, Labels, Reasoning, Condition, Protocol)
    assert all(isinstance(getattr(setup, g), k) for g, k in zip(GROUPS, kinds, strict=True))
    assert set(setup.schemes) == {"latin", "cyrillic", "numerals", "dash"}
    assert all(isinstance(s, Labels) for s in setup.schemes.values())


def test_the_setup_built_from_its_own_groups_is_the_same() -> None:
    typed = PresentationSetup.from_params(CONFIG, load_label_schemes())
    again = PresentationSetup(**{g: getattr(typed, g) for g in GROUPS}, schemes=typed.schemes)
    assert again == typed and again.prompt is typed.prompt


def test_a_condition_override_needs_no_composed_condition() -> None:
    """The interventions pass their own condition; the composed config need not hold one."""
    override = Condition(conditions=["blind"])
    setup = PresentationSetup.from_params(dataclasses.replace(CONFIG, condition=None), condition=override)
    assert setup.condition.conditions == ["blind"] and setup.prompt.name == "original"


def test_a_missing_or_bad_group_is_a_config_error_naming_it_and_the_setup_is_frozen() -> None:
    with pytest.raises(ConfigError, match="'labels'"):
        PresentationSetup.from_params(dataclasses.replace(CONFIG, labels=None))
    with pytest.raises(ConfigError, match=r"prompt\.blind"):  # a bad group stops where the config enters
        validate({"prompt": {"name": "x"}}, file=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        PresentationSetup.from_params(CONFIG).prompt = {}  # type: ignore[misc]


def test_engine_settings_come_from_the_typed_probe_group() -> None:
    engine = EngineSettings.from_probe(
        validate_group("probe", {"cache": "c.sqlite", "concurrency": 4}), progress=False
    )
    assert engine == EngineSettings("c.sqlite", 4, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        engine.concurrency = 1  # type: ignore[misc]
