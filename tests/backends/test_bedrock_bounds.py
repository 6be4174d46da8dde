"""The Converse backend's bounds on a call, against real boto3 clients answered by botocore's Stubber (no
network, fake keys): a per-call deadline, a breaker over the window, botocore's timeouts from the config,
and the engine counting Bedrock's throttling and 5xx codes as an outage."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.bedrock import RETRYABLE_CODES, BedrockBackend, default_client_factory
from blindmcq.config.schema import BedrockModel, model_config
from blindmcq.engine import run_requests
from blindmcq.engine.run import Unreachable, server_failed

MODEL_ID = "eu.amazon.nova-micro-v1:0"


class StubbedClients:
    """``region -> stubbed bedrock-runtime client`` (a BedrockBackend client_factory); unlike the shared
    fixture's, responses may be left over (an always-failing server is queued more than is asked of it)."""

    def __init__(self) -> None:
        self.clients: dict[str, Any] = {}
        self.stubbers: dict[str, Any] = {}

    def __call__(self, region: str) -> Any:
        self.stub(region)
        return self.clients[region]

    def stub(self, region: str) -> Any:
        import boto3
        from botocore.stub import Stubber

        if region not in self.clients:
            client = boto3.client("bedrock-runtime", region_name=region)
            self.clients[region], self.stubbers[region] = client, Stubber(client)
            self.stubbers[region].activate()
        return self.stubbers[region]

    def assert_all_used(self) -> None:
        for stubber in self.stubbers.values():
            stubber.assert_no_pending_responses()


def always(code: str, status: int, n: int = 2000) -> StubbedClients:
    """Clients whose every Converse call (up to ``n``) fails with ``code``."""
    clients = StubbedClients()
    for _ in range(n):
        clients.stub("eu-central-1").add_client_error(
            "converse", service_error_code=code, service_message="try later", http_status_code=status
        )
    return clients


def cfg(**extra: Any) -> BedrockModel:
    return model_config({"name": "nova-micro", "backend": "bedrock", "model_id": MODEL_ID,
                         "regions": ["eu-central-1"], "concurrency": 2, **extra})  # fmt: skip


def req(i: int = 0) -> ModelRequest:
    return ModelRequest(model="nova-micro", system=None, user=f"question {i}", max_tokens=5)


@pytest.mark.parametrize(
    ("code", "status"),
    [("ThrottlingException", 429), ("ServiceUnavailableException", 503), ("ModelNotReadyException", 429),
     ("InternalServerException", 500)],
)  # fmt: skip
def test_an_always_failing_converse_stops_the_run_within_the_window_naming_the_model(
    tmp_path: Path, code: str, status: int
) -> None:
    backend = BedrockBackend(
        cfg(retry={"max_attempts": 50, "base_s": 0.02, "max_s": 0.05}, breaker_window_s=0.5),
        client_factory=always(code, status),
    )
    started = time.monotonic()
    with pytest.raises(Unreachable) as info:
        run_requests([req(i) for i in range(40)], backend, cache=tmp_path / "c.sqlite", progress=False)
    took = time.monotonic() - started
    message = str(info.value)
    assert f"bedrock:{MODEL_ID}" in message and "\n" not in message
    assert "calls in a row" in message and code in message  # what the attempts met
    assert took < 10  # 40 calls x 50 attempts of backoff would take far longer


def test_the_breaker_ends_a_calls_retries_and_then_sends_nothing() -> None:
    clients = always("ThrottlingException", 429)
    backend = BedrockBackend(
        cfg(retry={"max_attempts": 1000, "base_s": 0.02, "max_s": 0.05}, breaker_window_s=0.3),
        client_factory=clients,
    )
    started = time.monotonic()
    out = backend.complete(req())
    assert out.meta["error_code"] == "CircuitOpen" and time.monotonic() - started < 5
    assert "0.3 s" in str(out.error) and "ThrottlingException" in str(out.error) and server_failed(out)
    after = backend.complete(req(1))
    assert after.meta["attempts"] == 0 and after.meta["regions_tried"] == []  # open: nothing is sent


def test_the_calls_deadline_bounds_its_retries() -> None:
    backend = BedrockBackend(
        cfg(retry={"max_attempts": 1000, "base_s": 0.05, "max_s": 0.1}, call_deadline_s=0.4,
            breaker_window_s=600),
        client_factory=always("ServiceUnavailableException", 503),
    )  # fmt: skip
    started = time.monotonic()
    out = backend.complete(req())
    took = time.monotonic() - started
    assert out.status == "error" and out.meta["error_code"] == "DeadlineExceeded"
    assert 0.3 < took < 3 and 1 < out.meta["attempts"] < 1000 and server_failed(out)


def test_an_answer_between_throttles_keeps_the_breaker_closed(converse_response: Any) -> None:
    clients = StubbedClients()
    stub = clients.stub("eu-central-1")
    for _ in range(6):
        stub.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
        stub.add_response("converse", converse_response("A"))
    backend = BedrockBackend(
        cfg(retry={"max_attempts": 5, "base_s": 0.05, "max_s": 0.05}, breaker_window_s=0.01),
        client_factory=clients,
    )
    for i in range(6):  # each call is throttled longer than the window, then answered
        assert backend.complete(req(i)).text == "A"
    assert not backend.breaker.is_open
    clients.assert_all_used()


def test_botocore_timeouts_come_from_the_config_cut_to_the_deadline() -> None:
    factory = default_client_factory(cfg(read_timeout_s=2.5, connect_timeout_s=0.5))
    config = factory("eu-central-1").meta.config
    assert (config.read_timeout, config.connect_timeout) == (2.5, 0.5)  # not truncated to whole seconds
    short = default_client_factory(cfg(read_timeout_s=300, connect_timeout_s=10, call_deadline_s=4))
    config = short("eu-central-1").meta.config
    assert (config.read_timeout, config.connect_timeout) == (4.0, 4.0)


def test_the_engine_counts_converses_throttling_and_5xx_as_an_outage() -> None:
    def err(code: str) -> ModelResponse:
        return ModelResponse("", status="error", meta={"error_code": code})

    for code in ("ThrottlingException", "TooManyRequestsException", "ServiceUnavailableException",
                 "InternalServerException", "ModelNotReadyException", "ModelTimeoutException"):  # fmt: skip
        assert code in RETRYABLE_CODES and server_failed(err(code)), code
    for code in ("ValidationException", "AccessDeniedException", "ResourceNotFoundException"):
        assert not server_failed(err(code)), code  # the server answered: a request it refuses
