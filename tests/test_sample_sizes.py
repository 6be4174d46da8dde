"""The sample an intervention stage takes: ``probe.sample``, capped by the intervention's own ``sample``
(``probe.sample=20`` gives 20 items, not the intervention's 30)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from blindmcq.config.schema import validate_group
from blindmcq.datasets.items import write_items
from blindmcq.datasets.registry import load_dataset
from blindmcq.errors import ConfigError
from blindmcq.tasks.probe import sample_items
from blindmcq.wiring.probe import stage_items


@pytest.fixture
def items_file(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    write_items(
        path,
        load_dataset(
            validate_group(
                "dataset", {"loader": "nonsense", "name": "n", "n_test": 40, "n_fewshot": 0, "seed": 0}
            )
        ),
    )
    return path


@pytest.mark.parametrize(
    ("probe_sample", "own", "expected"),
    [(20, 30, 20), (40, 30, 30), (30, 20, 20), (None, 30, 30), (20, None, 20), (None, None, 40)],
)
def test_answerpool_sample_is_capped_by_probe_sample(
    items_file: Path,
    caplog: pytest.LogCaptureFixture,
    probe_sample: int | None,
    own: int | None,
    expected: int,
) -> None:
    params = {"probe": {"sample": probe_sample, "seed": 0}}
    with caplog.at_level(logging.INFO):
        items = stage_items(params, {"items": str(items_file), "sample": own}, "intervention.answerpool")
    assert len(items) == expected
    assert f"intervention.answerpool: {expected} items" in caplog.text
    if probe_sample is not None and (own is None or probe_sample <= own):
        # the same seeded sample as the probe stage's, so the pool compares like with like
        assert [i.id for i in items] == [i.id for i in sample_items(load_items(items_file), probe_sample, 0)]
    probed = {i.id for i in sample_items(load_items(items_file), probe_sample, 0)}
    assert {i.id for i in items} <= probed  # a capped sample holds probed items only


def load_items(path: Path) -> list:
    from blindmcq.datasets.items import read_items

    return read_items(path)


def test_answerpool_sample_beyond_the_bank_names_its_key(items_file: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"intervention\.answerpool\.sample.*50 exceeds the 40 usable items"
    ):
        stage_items(
            {"probe": {"sample": None}}, {"items": str(items_file), "sample": 50}, "intervention.answerpool"
        )
