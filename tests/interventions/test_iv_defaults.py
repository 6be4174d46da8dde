"""The interventions' defaults live in the config schema only: the tasks' configs take every shared
field's default from ``RewriteIntervention`` and ``AnswerPoolIntervention``."""

from __future__ import annotations

import dataclasses

import pytest

from blindmcq.config.schema import AnswerPoolIntervention, RewriteIntervention, typed
from blindmcq.tasks.answerpool import PoolConfig
from blindmcq.tasks.rewrite import RewriteConfig


@pytest.mark.parametrize(
    ("task", "schema"), [(RewriteConfig, RewriteIntervention), (PoolConfig, AnswerPoolIntervention)]
)
def test_every_shared_default_is_the_schemas(task: type, schema: type) -> None:
    ours, theirs = task(), schema()
    shared = {f.name for f in dataclasses.fields(task)} & {f.name for f in dataclasses.fields(schema)}
    assert len(shared) >= 7
    for name in sorted(shared):
        value = getattr(theirs, name)
        assert getattr(ours, name) == (tuple(value) if isinstance(value, list) else value), name


def test_a_config_typed_by_the_schema_keeps_its_defaults() -> None:
    assert RewriteConfig.of(typed(RewriteIntervention, {})) == RewriteConfig()
    assert PoolConfig.of(typed(AnswerPoolIntervention, {})) == PoolConfig()
