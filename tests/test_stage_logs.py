"""What the stages log: figures a person can read (no dicts of 16-digit floats) and warnings that say
what they mean and which config key they concern."""

from __future__ import annotations

import re
import warnings

import pandas as pd

from blindmcq.analysis.gate import GateResult
from blindmcq.analysis.metrics import item_sets
from blindmcq.config.schema import Config
from blindmcq.wiring.runs import brief


def test_a_stage_logs_a_brief_view_of_its_metrics() -> None:
    metrics = {"items": 60, "fluency_sign_p": 0.22840022535329702, "acc": 0.2833333333333333, "n": 69.0}
    metrics |= {f"m{i}": 1 / 3 for i in range(10)}
    line = brief(metrics)
    assert "0.2284" in line and "0.2833" in line and "items 60" in line and "n 69" in line
    assert not re.search(r"\d\.\d{5,}", line)  # no long floats
    assert line.endswith("(8 more in metrics.json)")


def test_a_skipped_sample_says_what_it_is_and_why() -> None:
    ids = [f"i{n}" for n in range(60)]
    gate = GateResult(
        counts=pd.DataFrame({"item_id": ids}), accepted=ids[:49], rejected=ids[49:], retained_share=49 / 60,
        gate_model="m", k=5, orders=["rot0"],
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sets = item_sets(gate, sample_sizes=[400], seed=0)
    assert "sample400" not in sets
    (message,) = [str(w.message) for w in caught]
    assert message.startswith("analysis.sample_sizes: no sample400 set")
    assert "the accepted set has only 49 items" in message and "seeded sample of 400" in message


def test_a_stage_logs_a_warning_as_one_line(caplog, monkeypatch) -> None:
    from blindmcq.stages import _main

    monkeypatch.setattr(_main, "load_params", Config)
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after the test

    def body(config: Config) -> None:
        warnings.warn("analysis.sample_sizes: no sample400 set", stacklevel=2)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        _main.run_stage("analyze", body)
    (record,) = [r for r in caplog.records if "sample400" in r.getMessage()]
    assert record.getMessage() == "warning: analysis.sample_sizes: no sample400 set"
