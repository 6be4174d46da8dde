"""``RequestRun``'s parts one at a time: keying, leasing, sending, storing, and the breaker's count."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse, request_key
from blindmcq.engine.cache import CacheUnwritable, ResponseCache, make_holder
from blindmcq.engine.run import RequestRun, Unreachable


class Echo:
    name = "echo"
    abilities = Abilities()
    concurrency = 1

    def __init__(self) -> None:
        self.sent: list[str] = []

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"model": request.model, "user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.sent.append(request.user)
        return ModelResponse(text=request.user.upper())


class Batching(Echo):
    abilities = Abilities(many=True)

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def complete_many(self, requests: list[ModelRequest]) -> list[ModelResponse]:
        self.batches.append([r.user for r in requests])
        return [ModelResponse(text=r.user * 2) for r in requests]


def ask(user: str, model: str = "m") -> ModelRequest:
    return ModelRequest(model=model, system=None, user=user)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    with ResponseCache(tmp_path / "c.sqlite") as c:
        yield c


def test_keying_shares_one_key_between_identical_requests(cache: ResponseCache) -> None:
    backend = Echo()
    run = RequestRun([ask("a"), ask("b", "n"), ask("a"), ask("c")], backend, cache)
    assert run.keys == [
        request_key(backend, ask(u, m)) for u, m in [("a", "m"), ("b", "n"), ("a", "m"), ("c", "m")]
    ]
    assert run.by_key[run.keys[0]] == [0, 2]
    assert run.first_request(run.keys[2]) == ask("a")
    assert run.by_model(list(run.by_key)) == {"m": [run.keys[0], run.keys[3]], "n": [run.keys[1]]}


def test_settle_answers_repeats_from_the_first_call(cache: ResponseCache) -> None:
    run = RequestRun([ask("a"), ask("a")], Echo(), cache)
    run.settle(run.keys[0], ModelResponse(text="A"), "t", cached=False)
    first, repeat = run.results
    assert first is not None and repeat is not None
    assert (first.cached, repeat.cached) == (False, True) and first.response is repeat.response
    assert len(run.done) == 2 and run.in_cache == set()  # not stored yet: not counted as in the cache


def test_read_cache_settles_hits_and_returns_the_rest(cache: ResponseCache) -> None:
    backend = Echo()
    key = request_key(backend, ask("a"))
    cache.put(key, ModelResponse(text="old"), backend="echo", model="m", time="t0")
    run = RequestRun([ask("b"), ask("a")], backend, cache)
    assert run.read_cache() == [run.keys[0]]
    assert run.results[1] is not None and run.results[1].response.text == "old" and run.results[1].cached
    assert run.in_cache == {key} and backend.sent == []


def test_claim_leases_free_keys_returns_hits_and_defers_a_live_holders(cache: ResponseCache) -> None:
    backend = Echo()
    run = RequestRun([ask("free"), ask("stored"), ask("held")], backend, cache, poll_s=(0.01, 0.02))
    free, stored, held = run.keys
    cache.put(stored, ModelResponse(text="S"), backend="echo", model="m", time="t0")
    other = make_holder("other")  # this very process: alive, so its lease is honoured
    assert cache.claim(held, other, 60).state == "claimed"
    outcomes, mine = run.claim([free, stored, held], wait=False)
    assert mine == [free] and cache.lease(free) is not None and cache.lease(free)[0] == run.holder
    by_key = {o[0]: o for o in outcomes}
    assert by_key[stored][1] is not None and by_key[stored][1].text == "S" and by_key[stored][3] is True
    assert by_key[held] == (held, None, "", False)  # deferred, not sent
    assert not run.record(by_key[held]) and run.record(by_key[stored])
    # waiting: once the other holder stores its answer, the wait ends with that answer
    cache.put(held, ModelResponse(text="H"), backend="echo", model="m", time="t1", holder=other)
    outcomes, mine = run.claim([held], wait=True)
    assert mine == [] and outcomes[0][1] is not None and outcomes[0][1].text == "H"
    assert backend.sent == []


def test_send_calls_one_by_one_or_in_one_batch(cache: ResponseCache) -> None:
    single = Echo()
    assert [r.text for r in RequestRun([], single, cache).send([ask("a"), ask("b")])] == ["A", "B"]
    batching = Batching()
    assert [r.text for r in RequestRun([], batching, cache).send([ask("a")])] == ["A"]  # batch_size 1
    run = RequestRun([], batching, cache, batch_size=4)
    assert [r.text for r in run.send([ask("a"), ask("b")])] == ["aa", "bb"]
    assert batching.batches == [["a", "b"]]


def test_batches_follow_the_declared_ability_not_the_method(cache: ResponseCache) -> None:
    class Undeclared(Batching):  # has complete_many but does not declare it
        abilities = Abilities()

    undeclared = Undeclared()
    run = RequestRun([], undeclared, cache, batch_size=4)
    assert not run.batched
    assert [r.text for r in run.send([ask("a"), ask("b")])] == ["A", "B"] and undeclared.batches == []


def test_send_turns_a_raising_backend_into_error_responses(cache: ResponseCache) -> None:
    class Broken(Echo):
        def complete(self, request: ModelRequest) -> ModelResponse:
            raise ConnectionError("refused")

    (response,) = RequestRun([], Broken(), cache).send([ask("a")])
    assert response.status == "error" and (response.error or "").startswith("ConnectionError")


def test_store_commits_and_frees_the_lease(cache: ResponseCache) -> None:
    run = RequestRun([ask("a")], Echo(), cache)
    (key,) = run.keys
    run.claim([key], wait=False)
    outcome = run.store(key, ask("a"), ModelResponse(text="A"))
    assert outcome[0] == key and outcome[3] is False
    assert cache.get_many([key])[key].response.text == "A" and cache.lease(key) is None
    assert run.in_cache == {key} and not run.tripped.is_set()


def test_a_store_that_fails_keeps_the_answer_and_stops_sending(cache: ResponseCache) -> None:
    class Full(ResponseCache):
        def put(self, *args: Any, **kwargs: Any) -> bool:
            raise CacheUnwritable("disk full")

    with Full(":memory:") as full:
        run = RequestRun([ask("a")], Echo(), full)
        outcome = run.store(run.keys[0], ask("a"), ModelResponse(text="A"))
        assert outcome[1] is not None and outcome[1].text == "A"
        assert run.unstored == ["disk full"] and run.tripped.is_set()
        assert run.task(run.keys) == []  # tripped: nothing more is claimed or sent
        with pytest.raises(CacheUnwritable, match="1 paid answer"):
            run.check()


def test_record_counts_outages_in_a_row_and_trips_the_breaker(cache: ResponseCache) -> None:
    users = [f"q{i}" for i in range(4)]
    run = RequestRun([ask(u) for u in users], Echo(), cache, breaker=2)
    down = ModelResponse(text="", status="error", error="ConnectionError: refused")
    run.record((run.keys[0], down, "t", False))
    run.record((run.keys[1], ModelResponse(text="fine"), "t", False))  # an answer resets the streak
    assert run.streak == 0 and not run.tripped.is_set()
    run.record((run.keys[2], down, "t", False))
    run.record((run.keys[3], down, "t", False))
    assert run.streak == 2 and run.tripped.is_set() and run.last_outage == "could not connect"
    with pytest.raises(Unreachable, match="2 calls in a row could not connect"):
        run.check()


def test_execute_puts_the_parts_together(cache: ResponseCache) -> None:
    backend = Echo()
    run = RequestRun([ask("a"), ask("b"), ask("a")], backend, cache)
    out = run.execute({"m": 2})
    assert [r.response.text for r in out] == ["A", "B", "A"]
    assert [r.cached for r in out] == [False, False, True]
    assert sorted(backend.sent) == ["a", "b"] and cache.lease(run.keys[0]) is None
