"""One typed schema for cached responses, ``blindmcq cache check``, damaged files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from blindmcq.answers.predictions import to_table
from blindmcq.backends.base import ModelRequest, ModelResponse, coerce_tokens
from blindmcq.backends.openai_api import parse_chat, parse_responses
from blindmcq.cli.cache import main as cache_main
from blindmcq.engine import run_requests
from blindmcq.engine.cache import CacheDamaged, ResponseCache, utc_now
from blindmcq.errors import InputError


class Echo:
    name = "echo"
    concurrency = 1

    def __init__(self, usage: Any = 3) -> None:
        self.calls = 0
        self.usage = usage

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        return ModelResponse(text="A", input_tokens=self.usage, output_tokens=self.usage)


def _raw(path: Path, key: str, payload: dict[str, Any] | str, status: str = "ok") -> None:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO responses (key, backend, model, status, time, response)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (key, "echo", "m", status, "t", text),
        )


REQUEST = ModelRequest(model="m", system=None, user="q")


def _key_of(path: Path) -> str:
    """The key the engine stores REQUEST under (one call through an empty cache)."""
    out = run_requests([REQUEST], Echo(), cache=path, progress=False)
    return out[0].key


@pytest.mark.parametrize(
    "bad",
    [
        {"text": "A", "input_tokens": "10", "output_tokens": 1},  # a server's string usage
        {"text": "A", "status": "maybe"},  # an unknown status
        {"text": "A", "latency_s": "fast"},
        {"text": "A", "choice_logprobs": ["x"]},
        {"text": 5},
    ],
)
def test_a_row_outside_the_schema_is_a_miss_with_its_key_and_is_replaced(
    tmp_path: Path, bad: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    key = _key_of(path)
    _raw(path, key, bad, status=str(bad.get("status", "ok")))
    backend = Echo()
    with caplog.at_level("WARNING", logger="blindmcq.engine.cache"):
        out = run_requests([REQUEST], backend, cache=path, progress=False)
    assert backend.calls == 1 and not out[0].cached  # asked again, not served
    assert any(key in r.getMessage() for r in caplog.records)
    with ResponseCache(path) as cache:
        hit = cache.get(key)
    assert hit is not None and hit.response.input_tokens == 3 and hit.response.status == "ok"


def test_a_row_whose_status_column_disagrees_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    _raw(path, "k", {"text": "A", "status": "ok"}, status="error")
    with ResponseCache(path) as cache:
        assert cache.get("k") is None


def test_usage_strings_are_coerced_where_they_come_in(tmp_path: Path) -> None:
    assert [coerce_tokens(v) for v in (10, "10", 10.0, " 7 ", None, True, "n/a", -1, 2.5)] == [
        10, 10, 10, 7, None, None, None, None, None,
    ]  # fmt: skip
    chat = {"choices": [{"message": {"content": "A"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": "10", "completion_tokens": "1"}}  # fmt: skip
    response = parse_chat(chat)
    assert (response.input_tokens, response.output_tokens) == (10, 1)
    body = {"status": "completed", "output": [], "usage": {"input_tokens": "4", "output_tokens": "2"}}
    assert parse_responses(body).input_tokens == 4
    # any backend: the engine stores (and returns) integers
    out = run_requests([REQUEST], Echo(usage="10"), cache=tmp_path / "c.sqlite", progress=False)
    assert out[0].response.input_tokens == 10
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        hit = cache.get(out[0].key)
    assert hit is not None and hit.response.input_tokens == 10


def test_predictions_table_builds_after_a_string_usage_row(tmp_path: Path) -> None:
    """The crash of the report: an ArrowInvalid from the predictions table on every rerun."""
    from blindmcq.answers.records import PredictionRecord

    path = tmp_path / "c.sqlite"
    key = _key_of(path)
    _raw(path, key, {"text": "A", "input_tokens": "10", "output_tokens": "1"})
    out = run_requests([REQUEST], Echo(), cache=path, progress=False)
    fields = PredictionRecord.__dataclass_fields__
    row = {name: None for name in fields}
    row.update(item_id="i", model="m", condition="blind", phrasing="p", labels="latin", protocol="sl",
               reasoning="direct", order=[0, 1], order_id="rot0", n_options=2, correct=False,
               parse_status="ok", raw_response="A", request_hash=out[0].key, backend="echo", cached=False,
               setting="", input_tokens=out[0].response.input_tokens,
               output_tokens=out[0].response.output_tokens)  # fmt: skip
    table = to_table([PredictionRecord(**row)])
    assert table.column("input_tokens").to_pylist() == [3]


def test_cache_check_reports_and_repair_drops_bad_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("good", ModelResponse(text="A"), backend="echo", model="m", time=utc_now())
    _raw(path, "typed", {"text": "A", "input_tokens": "10"})
    _raw(path, "status", {"text": "A", "status": "maybe"}, status="maybe")
    assert cache_main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "typed" in out and "status" in out and "3 rows, 2 bad" in out
    assert cache_main(["check", "--repair", str(path)]) == 0
    assert cache_main(["check", str(path)]) == 0
    with ResponseCache(path) as cache:
        assert cache.keys() == {"good"}


def test_cache_check_on_a_missing_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cache_main(["check", str(tmp_path / "nope.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "nope.sqlite" in err and len(err.strip().splitlines()) == 1


def _damage(path: Path) -> None:
    """Overwrite a page in the middle of the file (not the header page)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert pages > 4
    with open(path, "r+b") as fh:
        for n in range(2, pages - 1):
            fh.seek(n * page)
            fh.write(b"\xa5" * page)


def test_a_damaged_file_is_one_line_with_the_recovery_command_and_repair_rebuilds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        for i in range(400):
            cache.put(f"k{i:03d}", ModelResponse(text="x" * 200), backend="e", model="m", time=utc_now())
    _damage(path)
    with pytest.raises(InputError) as info:
        with ResponseCache(path) as cache:
            cache.get_many([f"k{i:03d}" for i in range(400)])
    message = str(info.value)
    assert isinstance(info.value, CacheDamaged) or "not a usable" in message
    assert f"blindmcq cache check --repair {path}" in message and "\n" not in message
    assert cache_main(["check", str(path)]) == 1
    assert cache_main(["check", "--repair", str(path)]) == 0
    assert "damaged file is kept" in capsys.readouterr().out
    assert list(tmp_path.glob("c.sqlite.damaged-*"))
    assert cache_main(["check", str(path)]) == 0
    with ResponseCache(path) as cache:  # usable again: every row it holds fits the schema
        keys = cache.keys()
        assert len(cache.get_many(sorted(keys))) == len(keys)
