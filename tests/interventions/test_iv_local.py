"""The local base model (Gemma 3 270M) through both repairs, on a few real customs items."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindmcq.backends.registry import make_backend
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import RewriteIntervention, model_config, typed, validate_group
from blindmcq.datasets.registry import load_dataset
from blindmcq.engine.cache import ResponseCache
from blindmcq.tasks.answerpool import PoolConfig, build_groups, run_answerpool
from blindmcq.tasks.rewrite import RewriteConfig, rewrite_items

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gemma() -> tuple[dict, object]:
    cfg = {**load_model_file("gemma3-270m"), "threads": 1}
    return cfg, make_backend(model_config(cfg))


def test_local_model_rewrites_and_pools(samples: Path, tmp_path: Path, gemma: tuple[dict, object]) -> None:
    cfg, backend = gemma
    path = samples / "ua-customs-exam" / "questions.json"
    items = load_dataset(
        validate_group("dataset", {"loader": "customs", "path": str(path), "parts": ["legislation"]})
    )[:4]

    own = typed(
        RewriteIntervention, {"rewriter": "model", "model": cfg, "max_tokens": 8}, "intervention.rewrite"
    )
    conf = RewriteConfig.of(own)
    out = rewrite_items(items[:1], conf, backend=backend, cache=tmp_path / "c.sqlite")
    info = out[0].meta["rewrite"]
    assert out[0].options[out[0].key] == items[0].options[items[0].key]
    assert info["model"] == "gemma3-270m" and info["backend"].startswith("local:")
    assert set(info["status"]) == {str(j) for j in range(4) if j != items[0].key}

    pool_conf = PoolConfig(group_size=4, delete_share=0.25, conditions=("blind",))
    frame = run_answerpool(
        items, pool_conf, model_cfg=model_config(cfg), backend=backend, cache=tmp_path / "c.sqlite"
    )
    group = build_groups(items, pool_conf)[0]
    assert len(frame) == 4 and frame["parse_status"].eq("ok").all() and (~frame["answerable"]).sum() == 1
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        scored = [cache.get(h).response for h in frame["request_hash"]]
    assert all(len(r.choice_logprobs) == len(group.pool) + 1 for r in scored)
    assert all(r.meta["mode"] == "score" for r in scored)
