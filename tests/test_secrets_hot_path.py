"""``secrets.scrub_response`` runs on every answer and every cached row read back: the secret values are
computed once and reused, and recomputed when a secret is registered or a secret-named variable changes."""

from __future__ import annotations

from typing import Any

import pytest

from blindmcq import secrets
from blindmcq.backends.base import ModelResponse


def echo(text: str) -> ModelResponse:
    return ModelResponse(text, status="error", error=f"HTTP401: {text}",
                         meta={"provider_message": text, "trace": [text, {"deep": text}]})  # fmt: skip


def strings(response: ModelResponse) -> list[str]:
    meta: Any = response.meta
    return [response.text, str(response.error), meta["provider_message"], *meta["trace"][:1],
            meta["trace"][1]["deep"]]  # fmt: skip


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the values were computed from scratch."""
    count = [0]
    real = secrets._sorted_values

    def counted(named: Any) -> tuple[str, ...]:
        count[0] += 1
        return real(named)

    monkeypatch.setattr(secrets, "_sorted_values", counted)
    monkeypatch.setattr(secrets, "_VALUES_MEMO", None)
    return count


def test_the_values_are_computed_once_for_many_responses(computed: list[int]) -> None:
    secrets.register_secret("hot-path-value-0001")
    for _ in range(200):
        out = secrets.scrub_response(echo("model says hot-path-value-0001"))
        assert all("hot-path-value-0001" not in s and secrets.REDACTED in s for s in strings(out))
    assert computed[0] == 1


def test_a_secret_registered_later_is_scrubbed_from_then_on(computed: list[int]) -> None:
    assert "late-secret-value-0002" in secrets.scrub_response(echo("late-secret-value-0002")).text
    secrets.register_secret("late-secret-value-0002")  # e.g. a ${secret:} resolved by a later stage
    out = secrets.scrub_response(echo("x late-secret-value-0002 y"))
    assert all("late-secret-value-0002" not in s for s in strings(out))
    assert computed[0] == 2


def test_a_secret_named_variable_set_or_changed_later_is_scrubbed(
    computed: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HOT_PATH_API_TOKEN", raising=False)
    assert "first-token-0003" in secrets.scrub_response(echo("first-token-0003")).text
    monkeypatch.setenv("HOT_PATH_API_TOKEN", "first-token-0003")
    assert secrets.scrub_response(echo("first-token-0003")).text == secrets.REDACTED
    monkeypatch.setenv("HOT_PATH_API_TOKEN", "second-token-0003")  # same names, another value
    out = secrets.scrub_response(echo("second-token-0003 and first-token-0003"))
    assert out.text == f"{secrets.REDACTED} and first-token-0003"  # the old value is a secret no more
    monkeypatch.setenv("UNRELATED_NAME", "not-a-secret-0003")  # a name that does not look secret
    assert "not-a-secret-0003" in secrets.scrub_response(echo("not-a-secret-0003")).text


def test_an_explicit_environment_is_not_mixed_with_the_memo(computed: list[int]) -> None:
    secrets.scrub_response(echo("warm"))
    assert secrets.scrub_text("a given-token-0004", {"MY_TOKEN": "given-token-0004"}) == "a ***"
    assert "given-token-0004" in secrets.scrub_response(echo("given-token-0004")).text
    assert "given-token-0004" not in secrets.secret_values()


def test_the_longest_value_is_replaced_first() -> None:
    secrets.register_secret("overlap-0005")
    secrets.register_secret("overlap-0005-longer")
    assert secrets.scrub_text("overlap-0005-longer", assignments=False) == secrets.REDACTED
