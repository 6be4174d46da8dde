"""Fixtures of the harness tests: the default sample (the default bank's 340 items, extracted from the
committed PDFs, and the probe's seeded 60) and the default probe config. The harnesses themselves are an
optional extra: ``harness_support.require``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from blindmcq.config.files import load_groups, load_label_schemes
from blindmcq.datasets.items import Item, read_items
from blindmcq.harnesses.documents import ProbeConfig
from blindmcq.harnesses.export import DEFAULTS, GROUPS
from blindmcq.tasks.probe import sample_items


@pytest.fixture(scope="session")
def bank_items(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default bank's items.jsonl, built from defaults/bank/ as the corpus stage builds it (~4 s)."""
    from blindmcq.datasets.registry import build_corpus

    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    out = tmp_path_factory.mktemp("corpus")
    old = Path.cwd()
    os.chdir(repo_root)  # the dataset config names defaults/ relative to the checkout
    try:
        build_corpus(params["dataset"], out, seed=0)
    finally:
        os.chdir(old)
    return out / "items.jsonl"


@pytest.fixture(scope="session")
def default_sample(bank_items: Path) -> list[Item]:
    """The probe's default sample: 60 items, seed 0 (conf/probe/default.yaml)."""
    return sample_items(read_items(bank_items), 60, 0)


@pytest.fixture(scope="session")
def probe_config() -> ProbeConfig:
    """The default presentation: original phrasing, Latin labels, direct, blind/full/forced, sl."""
    options = load_groups(GROUPS)
    groups = {g: options.option(g, DEFAULTS[g]) for g in GROUPS}
    return ProbeConfig(label_schemes=load_label_schemes(), **groups)
