"""Both intervention configs reject an unknown key, naming it, like every other config object."""

from __future__ import annotations

import pytest

from blindmcq.errors import ConfigError
from blindmcq.tasks.answerpool import PoolConfig
from blindmcq.tasks.rewrite import RewriteConfig


def test_a_misspelt_key_is_an_error_not_dropped() -> None:
    with pytest.raises(ConfigError, match=r"intervention\.rewrite\.tolerence"):
        RewriteConfig.from_cfg({"rewriter": "length_match", "tolerence": 0.2})
    with pytest.raises(ConfigError, match=r"intervention\.answerpool\.group_sise"):
        PoolConfig.from_cfg({"group_sise": 4})


def test_the_shipped_keys_are_accepted() -> None:
    rewrite = RewriteConfig.from_cfg({"items": "x.jsonl", "sample": 3, "conditions": ["blind"]})
    assert rewrite.tolerance == 0.15
    assert PoolConfig.from_cfg({"ordinary_orders": ["rot0"], "sample": 3}).group_size == 5
