"""The default plan's wire requests are the ones the committed run made: every request the probe stage
builds from the released ``params.yaml`` and corpus hashes (``request_key``: the cache key) to the
``request_hash`` of its row in the released predictions, model by model, repeats included. A change to how
a config is read that moved one prompt, label or token limit would change a hash, and every cached
answer with it. No model is loaded: a backend's wire request needs none.

The lexical member is left out: its wire request names the statute index (``index_id``, a hash of the
built index's meta), which is a pipeline output, not a committed file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from blindmcq.backends.base import request_key
from blindmcq.backends.registry import abilities_for, make_backend
from blindmcq.config.files import load_label_schemes, load_models
from blindmcq.config.schema import LocalModel
from blindmcq.datasets.items import read_items
from blindmcq.errors import ConfigError
from blindmcq.params import load_params
from blindmcq.tasks.probe import PresentationSetup, build_jobs, probe_sample, with_cloze_fields
from blindmcq.wiring.probe import panel_configs, panel_members

RELEASE = Path(__file__).resolve().parents[1] / "releases" / "default"


def test_every_wire_request_of_the_default_plan_hashes_as_committed() -> None:
    config = load_params(RELEASE / "params.yaml")
    sample = probe_sample(read_items(RELEASE / "results" / "corpus" / "items.jsonl"), config.group("probe"))
    setup = PresentationSetup.from_params(config, load_label_schemes())
    members = panel_configs(config, load_models(panel_members(config)))
    committed = pd.read_parquet(RELEASE / "results" / "predictions" / "predictions.parquet")
    checked = []
    for cfg in [config.group("model"), *members]:
        if cfg.backend == "lexical":
            continue
        try:
            backend = make_backend(cfg)
        except ConfigError as exc:  # the local weights' package is not installed here
            pytest.skip(f"{cfg.name}: {exc}")
        _, jobs = build_jobs(sample, cfg, setup, abilities=abilities_for(cfg, backend))
        if isinstance(cfg, LocalModel) and cfg.scoring == "cloze":
            jobs = with_cloze_fields(jobs, sample, backend)
        built = sorted(request_key(backend, job.request) for job in jobs)
        expected = sorted(committed.loc[committed["model"] == cfg.name, "request_hash"].astype(str))
        assert built == expected, cfg.name
        checked.append(cfg.name)
    # the letter-scored model, its three cloze variants and the two surface heuristics
    assert len(checked) == 6 and len(set(committed["model"].astype(str)) - set(checked)) == 1
