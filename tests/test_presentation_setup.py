"""PresentationSetup (issue #31): the five presentation groups as one frozen value."""

from __future__ import annotations

import dataclasses

import pytest

from blindmcq.errors import ConfigError
from blindmcq.tasks.probe import GROUPS, PresentationSetup

PARAMS = {g: {"name": g} for g in GROUPS}


def test_from_params_takes_the_five_composed_groups() -> None:
    setup = PresentationSetup.from_params(PARAMS)
    assert [getattr(setup, g)["name"] for g in GROUPS] == list(GROUPS)


def test_a_condition_override_needs_no_composed_condition() -> None:
    """The interventions pass their own condition; the composed config need not hold one."""
    override = {"conditions": ["blind"]}
    setup = PresentationSetup.from_params(
        {k: v for k, v in PARAMS.items() if k != "condition"}, condition=override
    )
    assert setup.condition is override and setup.prompt == {"name": "prompt"}


def test_a_missing_group_is_a_config_error_naming_it_and_the_setup_is_frozen() -> None:
    with pytest.raises(ConfigError, match="'labels'"):
        PresentationSetup.from_params({k: v for k, v in PARAMS.items() if k != "labels"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        PresentationSetup.from_params(PARAMS).prompt = {}  # type: ignore[misc]
