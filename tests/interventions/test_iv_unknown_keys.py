"""Both intervention configs reject an unknown key, naming it, like every other config object: the schema
types them where they enter, and the tasks' records are built from the typed group."""

from __future__ import annotations

import pytest

from blindmcq.config.schema import AnswerPoolIntervention, RewriteIntervention, typed
from blindmcq.errors import ConfigError
from blindmcq.tasks.answerpool import PoolConfig
from blindmcq.tasks.rewrite import RewriteConfig


def test_a_misspelt_key_is_an_error_not_dropped() -> None:
    with pytest.raises(ConfigError, match=r"intervention\.rewrite\.tolerence"):
        typed(RewriteIntervention, {"rewriter": "length_match", "tolerence": 0.2}, "intervention.rewrite")
    with pytest.raises(ConfigError, match=r"intervention\.answerpool\.group_sise"):
        typed(AnswerPoolIntervention, {"group_sise": 4}, "intervention.answerpool")


def test_the_shipped_keys_are_accepted() -> None:
    rewrite = typed(RewriteIntervention, {"items": "x.jsonl", "sample": 3, "conditions": ["blind"]})
    assert RewriteConfig.of(rewrite).tolerance == 0.15
    pool = typed(AnswerPoolIntervention, {"ordinary_orders": ["rot0"], "sample": 3})
    assert PoolConfig.of(pool).group_size == 5
