"""The probe end to end on real items behind the fault-injecting backend: throttling bursts, timeouts,
5xx, truncated and empty answers, refusals and slow tails. The run completes; every call is either retried
to success or recorded with its status; a rerun makes exactly the calls that ended in error."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from blindmcq.answers.records import PARSE_STATUSES
from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.bedrock import RetryPolicy
from blindmcq.backends.fault import FaultBackend, FaultRates
from blindmcq.backends.registry import fault_inner_cfg, make_backend
from blindmcq.config.files import load_group, load_label_schemes, load_model_file
from blindmcq.config.schema import FaultModel, model_config, validate_group
from blindmcq.datasets.registry import load_dataset
from blindmcq.engine.cache import ResponseCache
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe, sample_items

BANK = str(Path(__file__).parent / "fixtures/samples/ua-customs-exam/questions.json")  # real items
RATES = FaultRates(
    throttle=0.3, throttle_burst=3, timeout=0.05, server_error=0.05, truncate=0.05, empty=0.05,
    refuse=0.05, latency_s=0.01, tail_rate=0.05, tail_s=5.0,
)  # fmt: skip


def fault_counts(predictions: pd.DataFrame, cache_path: str | Path) -> dict[str, int]:
    """Counts for a report: final status per call, calls retried to success, injected faults seen.

    Retry history is read from the cached responses' meta (the predictions keep only the final answer);
    calls that ended in error are not cached and are counted from the predictions' ``error`` column.
    """
    counts: Counter[str] = Counter(calls=len(predictions))
    counts.update(f"status_{s}" for s in predictions["parse_status"])
    with ResponseCache(cache_path) as cache:
        hits = cache.get_many(list(predictions["request_hash"]))
    for key in predictions["request_hash"]:
        meta = hits[key].response.meta if key in hits else {}
        codes = list(meta.get("retried_codes") or [])
        counts["retried_to_success"] += bool(codes)
        counts.update(f"retried_{code}" for code in codes)
        if meta.get("fault"):
            counts[f"fault_{meta['fault']}"] += 1
    for error in predictions["error"].dropna():
        counts[f"final_error_{str(error).split(':')[0].split(' ')[0]}"] += 1
    return dict(sorted(counts.items()))


class Counting:
    """Counts requests reaching the backend (what a real run would pay for)."""

    def __init__(self, inner: FaultBackend) -> None:
        self.inner, self.name, self.concurrency = inner, inner.name, 4
        self.calls: Counter[str] = Counter()

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls[request.cache_key(self.name)] += 1
        return self.inner.complete(request)


def probe(backend: Any, items: list[Any], cache: Path, model_cfg: FaultModel) -> pd.DataFrame:
    return run_probe(
        items, model_cfg=model_cfg, setup=PresentationSetup(
            prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
            reasoning=load_group("reasoning", "direct"),
            condition=replace(load_group("condition", "blind"), forced=True),
            protocol=load_group("protocol", "sl"), schemes=load_label_schemes(),
        ),
        engine=EngineSettings(cache, progress=False), backend=backend,
    )  # fmt: skip


def test_faulty_run_completes_with_every_call_recorded(tmp_path: Path) -> None:
    bank = load_dataset(
        validate_group("dataset", {"loader": "customs", "path": BANK, "parts": ["legislation"]})
    )
    items = sample_items(bank, 25, seed=0)
    model_cfg = model_config(load_model_file("fault-demo"))
    sleeps: list[float] = []
    fault = FaultBackend(
        make_backend(fault_inner_cfg(model_cfg)), RATES, seed=7,
        policy=RetryPolicy(max_attempts=4, base_s=0.01, max_s=0.1), sleep=sleeps.append,
    )  # fmt: skip
    backend = Counting(fault)
    cache = tmp_path / "cache.sqlite"
    predictions = probe(backend, items, cache, model_cfg)

    # one record per presentation (8 orders + 4 forced slots per item), none dropped, none repeated
    assert len(predictions) == 25 * 12
    assert not predictions.duplicated(["item_id", "order_id"]).any()
    assert set(predictions["item_id"]) == {item.id for item in items}
    assert set(predictions["parse_status"]) <= set(PARSE_STATUSES)
    # a forced order equal to a rotation is the same request: sent once (the runner dedupes)
    assert sum(backend.calls.values()) == predictions["request_hash"].nunique() < len(predictions)
    assert max(backend.calls.values()) == 1

    counts = fault_counts(predictions, cache)
    print("fault run counts:", counts)  # the figures for the report (pytest -s)
    assert sum(v for k, v in counts.items() if k.startswith("status_")) == counts["calls"] == 300
    # every kind of fault was met and handled
    assert counts["retried_to_success"] > 50 and counts["retried_ThrottlingException"] > 50
    assert counts["retried_Timeout"] > 0 and counts["retried_ServiceUnavailableException"] > 0
    assert counts["status_refused"] > 0 and counts["fault_empty"] > 0 and counts["fault_truncated"] > 0
    assert sleeps.count(RATES.tail_s) > 0  # slow tails, waited through the injectable sleep
    # the retry budget ran out for some calls: recorded as errors naming the code, never raised
    errors = predictions[predictions["parse_status"] == "error"]
    assert len(errors) > 0 and errors["error"].notna().all()
    assert counts["status_error"] == sum(v for k, v in counts.items() if k.startswith("final_error_"))
    # an empty or half answer is recorded as unparseable (wrong), not as a pick
    empty = predictions[predictions["raw_response"] == ""]
    assert set(empty["parse_status"]) <= {"unparseable", "error", "refused"}
    assert not predictions.loc[predictions["parse_status"] != "ok", "correct"].any()

    # the rerun pays for exactly the calls that ended in error (the faults are seeded, so they fail again)
    backend.calls.clear()
    again = probe(backend, items, cache, model_cfg)
    assert set(backend.calls) == set(errors["request_hash"])
    assert sum(backend.calls.values()) == errors["request_hash"].nunique()
    pd.testing.assert_frame_equal(
        again.drop(columns=["cached", "time", "latency_s"]),
        predictions.drop(columns=["cached", "time", "latency_s"]),
    )


@pytest.mark.parametrize("burst", [1, 5])
def test_throttling_alone_is_always_retried_to_success(tmp_path: Path, burst: int) -> None:
    items = load_dataset(
        validate_group("dataset", {"loader": "customs", "path": BANK, "parts": ["legislation"]})
    )[:10]
    model_cfg = model_config(load_model_file("fault-demo"))
    fault = FaultBackend(
        make_backend(fault_inner_cfg(model_cfg)), FaultRates(throttle=0.3, throttle_burst=burst), seed=1,
        policy=RetryPolicy(max_attempts=burst + 1, base_s=0.01), sleep=lambda s: None,
    )  # fmt: skip
    predictions = probe(fault, items, tmp_path / "cache.sqlite", model_cfg)
    counts = fault_counts(predictions, tmp_path / "cache.sqlite")
    assert counts["status_ok"] == counts["calls"] == 120
    assert 20 < counts["retried_to_success"] < 60  # about 30% of 120
