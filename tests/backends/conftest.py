"""Shared fixtures: real boto3 clients with fake credentials, answered by botocore's Stubber."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MODEL_DIR = Path(__file__).resolve().parents[2] / "conf" / "model"


@pytest.fixture(autouse=True)
def _fake_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real account: fake keys, no profile, no instance metadata."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


class StubbedClients:
    """``region -> stubbed bedrock-runtime client``; usable as a BedrockBackend client_factory."""

    def __init__(self) -> None:
        import boto3
        from botocore.stub import Stubber

        self._boto3, self._stubber_cls = boto3, Stubber
        self.clients: dict[str, Any] = {}
        self.stubbers: dict[str, Any] = {}

    def __call__(self, region: str) -> Any:
        return self.client(region)

    def client(self, region: str) -> Any:
        if region not in self.clients:
            client = self._boto3.client("bedrock-runtime", region_name=region)
            stubber = self._stubber_cls(client)
            stubber.activate()
            self.clients[region], self.stubbers[region] = client, stubber
        return self.clients[region]

    def stub(self, region: str) -> Any:
        self.client(region)
        return self.stubbers[region]

    def assert_all_used(self) -> None:
        for stubber in self.stubbers.values():
            stubber.assert_no_pending_responses()


@pytest.fixture
def stubs() -> Iterator[StubbedClients]:
    clients = StubbedClients()
    yield clients
    clients.assert_all_used()


def _converse_response(text: str = "Б", stop: str = "end_turn", *, reasoning: str | None = None) -> dict:
    content: list[dict[str, Any]] = []
    if reasoning is not None:
        content.append({"reasoningContent": {"reasoningText": {"text": reasoning, "signature": "sig"}}})
    content.append({"text": text})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 120, "outputTokens": 3, "totalTokens": 123},
        "metrics": {"latencyMs": 250},
    }


@pytest.fixture
def converse_response() -> Any:
    """A factory for valid Converse response bodies."""
    return _converse_response
