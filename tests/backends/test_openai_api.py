"""The OpenAI-style backend against a live local HTTP server (started and stopped by each test).

The server speaks chat completions and the Responses API as documented (OpenAI API reference; Bedrock user
guide, "Inference using Responses API"); each test scripts its answers (status, body, delay) and reads
back the exact request bodies the real ``openai`` client sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest, ModelResponse, request_key
from blindmcq.backends.openai_api import OpenAIBackend, SigV4HttpxAuth, mantle_base_url, parse_responses
from blindmcq.backends.registry import make_backend
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import model_config
from blindmcq.engine.cache import ResponseCache
from blindmcq.errors import ConfigError
from blindmcq.tasks.probe import Job, run_calls

LABELS = ("A", "B", "C", "D")


def chat_body(content: str = "B", *, top: list[tuple[str, float]] | None = None) -> dict:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
    }
    if top is not None:
        choice["logprobs"] = {
            "content": [
                {
                    "token": top[0][0],
                    "logprob": top[0][1],
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
                }
            ]
        }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12},
    }


def responses_body(text: str = "C", *, status: str = "completed", reasoning_tokens: int = 320) -> dict:
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": "openai.gpt-5.6",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        ],
        "usage": {
            "input_tokens": 40,
            "output_tokens": reasoning_tokens + 1,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": 40 + reasoning_tokens + 1,
        },
    }
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
        body["output"] = body["output"][:1]
    return body


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is
    delay_s: float = 0.0


class FakeServer:
    """OpenAI-compatible server on 127.0.0.1: scripted replies first, then a default per path."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw)
                with server.lock:
                    server.requests.append((self.path, dict(self.headers), body))
                    reply = server.script.pop(0) if server.script else server.default(self.path, body)
                if reply.delay_s:
                    threading.Event().wait(reply.delay_s)
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload.encode())))
                    self.end_headers()
                    self.wfile.write(payload.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out first

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def default(self, path: str, body: dict) -> Reply:
        if path.endswith("/responses"):
            return Reply(body=responses_body())
        if body.get("logprobs"):
            # " B" and "B" both mean B; D is outside the top list
            return Reply(body=chat_body("B", top=[(" B", -0.4), ("B", -1.6), ("A", -2.0), ("C", -3.1)]))
        # a heuristic answer: the label of the first option line, so different prompts differ
        return Reply(body=chat_body(body["messages"][-1]["content"].strip()[-1:] or "A"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def bodies(self) -> list[Any]:
        return [body for _, _, body in self.requests]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    srv = FakeServer()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


def backend(srv: FakeServer, **cfg: Any) -> OpenAIBackend:
    base = {"name": "local-test", "backend": "openai", "base_url": srv.url, "model_id": "test-model",
            "retry": {"max_attempts": 3, "base_s": 0.0, "max_s": 0.0}}  # fmt: skip
    return OpenAIBackend(model_config({**base, **cfg}), sleep=lambda _s: None)


def req(user: str = "Q?\nA) x\nB) y", **kw: Any) -> ModelRequest:
    return ModelRequest(model="local-test", system="Answer with a letter.", user=user, **kw)


# -- chat completions ----------------------------------------------------------------------------------


def test_chat_request_body_is_the_wire_request(server: FakeServer) -> None:
    b = backend(server)
    r = req(max_tokens=8)
    out = b.complete(r)
    assert out.status == "ok" and out.text == "y"
    assert server.requests[0][0] == "/v1/chat/completions"
    assert server.bodies() == [
        {
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Answer with a letter."},
                {"role": "user", "content": "Q?\nA) x\nB) y"},
            ],
            "max_tokens": 8,
            "temperature": 0.0,
        }
    ]
    assert server.bodies()[0] == b.wire_request(r)
    assert (out.input_tokens, out.output_tokens) == (11, 1)
    assert out.meta["temperature_sent"] is True and out.meta["attempts"] == 1


def test_api_key_comes_from_the_environment_and_is_never_recorded(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVER_KEY", "sk-secret-123")
    b = backend(server, auth="api_key", api_key_env="MY_SERVER_KEY")
    out = b.complete(req())
    assert server.requests[0][1]["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in json.dumps(out.meta) + json.dumps(b.wire_request(req())) + b.name
    monkeypatch.delenv("MY_SERVER_KEY")
    with pytest.raises(ConfigError, match="MY_SERVER_KEY"):
        backend(server, auth="api_key", api_key_env="MY_SERVER_KEY").client()


def test_label_scoring_from_top_logprobs(server: FakeServer) -> None:
    b = backend(server, logprobs=True, top_logprobs=5)
    assert b.abilities.score_labels and b.abilities.logprobs
    out = b.complete(req(choices=LABELS, max_tokens=16))
    body = server.bodies()[0]
    assert (body["max_tokens"], body["logprobs"], body["top_logprobs"]) == (1, True, 5)
    import math

    scores = out.choice_logprobs
    assert scores is not None and len(scores) == 4
    assert scores[0] == pytest.approx(-2.0) and scores[2] == pytest.approx(-3.1)
    assert scores[1] == pytest.approx(math.log(math.exp(-0.4) + math.exp(-1.6)))  # " B" and "B" summed
    assert scores[3] == float("-inf") and out.meta["labels_outside_top"] == ["D"]
    assert max(range(4), key=lambda i: scores[i]) == 1


def test_scoring_refuses_a_server_without_logprobs(server: FakeServer) -> None:
    server.script.append(Reply(body=chat_body("B")))  # no logprobs in the answer
    out = backend(server, logprobs=True).complete(req(choices=LABELS))
    assert out.status == "error" and out.meta["error_code"] == "NoLogprobs"


def test_429_then_500_are_retried_then_answered(server: FakeServer) -> None:
    server.script += [
        Reply(429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}),
        Reply(500, {"error": {"message": "internal"}}),
    ]
    out = backend(server).complete(req())
    assert out.status == "ok"
    assert out.meta["retried_codes"] == ["TooManyRequests", "HTTP500"] and out.meta["attempts"] == 3
    assert len(server.requests) == 3 and server.bodies()[0] == server.bodies()[2]  # same body each time


def test_retry_budget_ends_in_a_recorded_error(server: FakeServer) -> None:
    server.script += [Reply(503, {"error": {"message": "busy"}})] * 3
    out = backend(server).complete(req())
    assert out.status == "error" and out.meta["retried_codes"] == ["HTTP503"] * 3
    assert len(server.requests) == 3


def test_timeout_is_retried(server: FakeServer) -> None:
    server.script.append(Reply(body=chat_body("A"), delay_s=1.5))
    out = backend(server, read_timeout_s=0.3).complete(req())
    assert out.status == "ok" and out.meta["retried_codes"] == ["Timeout"]
    assert len(server.requests) == 2


def test_malformed_json_is_an_error_not_retried(server: FakeServer) -> None:
    server.script.append(Reply(200, '{"choices": [ broken'))
    out = backend(server).complete(req())
    assert out.status == "error" and out.meta["error_code"] == "MalformedResponse"
    assert len(server.requests) == 1


def test_400_is_final_with_the_providers_message(server: FakeServer) -> None:
    msg = "Unsupported parameter: 'temperature' is not supported with this model."
    server.script.append(Reply(400, {"error": {"message": msg, "type": "invalid_request_error",
                                               "param": "temperature"}}))  # fmt: skip
    out = backend(server).complete(req())
    assert out.status == "error" and len(server.requests) == 1  # never retried as throttling
    assert out.meta["error_code"] == "HTTP400" and out.meta["rejected_parameter"] == "temperature"
    assert msg in out.error and msg in out.meta["provider_message"]


def test_end_to_end_through_runner_and_cache(server: FakeServer, tmp_path: Path) -> None:
    @dataclass
    class Pres:
        item_id: str
        order: list[int]
        key_slot: int | None
        condition: str = "blind"
        phrasing: str = "original"
        labels: str = "latin"
        protocol: str = "sl"
        reasoning: str = "direct"
        order_id: str = "rot0"
        forced_slot: int | None = None
        n_options: int = 4
        setting: str = ""

    @dataclass
    class Parsed:
        slot: int | None
        status: str
        label: str | None = None

    def interpret(p: Pres, response: ModelResponse) -> Parsed:
        text = response.text.strip()
        return Parsed(LABELS.index(text), "ok", text) if text in LABELS else Parsed(None, "unparseable")

    cfg = load_model_file(Path(__file__).resolve().parents[2] / "conf" / "model" / "openai-local.yaml")
    b = make_backend(model_config({**cfg, "base_url": server.url}))
    assert isinstance(b, OpenAIBackend)
    jobs = [Job(Pres(f"i{i}", [0, 1, 2, 3], 0), req(f"Q{i}\n{LABELS[i % 4]}")) for i in range(6)]
    cache = ResponseCache(tmp_path / "c.sqlite")
    first = run_calls(jobs, b, cache=cache, interpret=interpret, progress=False, batch_size=1)
    assert [r.picked_slot for r in first] == [i % 4 for i in range(6)]
    assert not any(r.cached for r in first)
    assert len(server.requests) == 6 and len(cache) == 6
    again = run_calls(jobs, b, cache=cache, interpret=interpret, progress=False, batch_size=1)
    assert len(server.requests) == 6  # every answer from the cache
    assert [r.picked_slot for r in again] == [r.picked_slot for r in first]
    assert all(r.cached for r in again)


def test_cache_key_is_the_body_and_endpoint(server: FakeServer) -> None:
    a, b = backend(server), backend(server, base_url="http://127.0.0.1:1/v1")
    r = req()
    assert request_key(a, r) != request_key(b, r)  # another server, another key
    assert request_key(a, r) == request_key(backend(server), r)
    assert request_key(a, r) != request_key(backend(server, accepts_temperature=False), r)


# -- Responses API (Bedrock bedrock-mantle) -------------------------------------------------------------


def gpt56(server: FakeServer, **cfg: Any) -> OpenAIBackend:
    base = load_model_file("gpt-5.6")
    base.update(api="responses", base_url=server.url, retry={"max_attempts": 3, "base_s": 0.0})
    return OpenAIBackend(model_config({**base, **cfg}), sleep=lambda _s: None)


def test_model_config_selects_the_responses_api() -> None:
    cfg = load_model_file("gpt-5.6")
    assert cfg.get("api", "converse") == "converse"  # the paper's route stays the default
    from blindmcq.backends.bedrock import BedrockBackend

    assert isinstance(make_backend(model_config(cfg)), BedrockBackend)
    b = make_backend(model_config({**cfg, "api": "responses"}))
    assert isinstance(b, OpenAIBackend) and b.abilities.reasons
    assert (
        b.endpoint == mantle_base_url(cfg["regions"][0]) == "https://bedrock-mantle.eu-central-1.api.aws/v1"
    )
    with pytest.raises(ConfigError, match="api"):
        make_backend(model_config({**cfg, "api": "invoke"}))


def test_responses_success_records_reasoning_tokens(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-XYZ")
    b = gpt56(server)
    r = req(max_tokens=64)
    out = b.complete(r)
    path, headers, body = server.requests[0]
    assert path == "/v1/responses" and headers["Authorization"] == "Bearer bedrock-api-key-XYZ"
    # no temperature (the model refuses it), room to reason (64 raised to the config's 4096)
    assert body == {"model": b.model_id, "instructions": "Answer with a letter.", "input": "Q?\nA) x\nB) y",
                    "max_output_tokens": 4096, "store": False}  # fmt: skip
    assert body == b.wire_request(r)
    assert out.status == "ok" and out.text == "C"
    assert out.meta["reasoning_tokens"] == 320 and out.meta["stop_reason"] == "end_turn"
    assert out.meta["temperature_sent"] is False and out.meta["reasoning_effort_sent"] is None
    assert "bedrock-api-key-XYZ" not in json.dumps(out.meta)


def test_responses_incomplete_for_max_output_tokens(server: FakeServer) -> None:
    server.script.append(Reply(body=responses_body(status="incomplete", reasoning_tokens=4096)))
    out = gpt56(server).complete(req())
    assert out.status == "ok" and out.text == ""
    assert out.meta["stop_reason"] == "max_tokens" and out.meta["incomplete_reason"] == "max_output_tokens"
    assert out.meta["reasoning_tokens"] == 4096


def test_responses_rejected_reasoning_effort_is_recorded(server: FakeServer) -> None:
    msg = "Unsupported parameter: 'reasoning.effort' is not supported with this model."
    error = {"message": msg, "type": "invalid_request_error", "param": "reasoning.effort"}
    server.script.append(Reply(400, {"error": error}))
    b = gpt56(server, reasoning_effort="low")
    out = b.complete(req())
    assert server.bodies()[0]["reasoning"] == {"effort": "low"}
    assert out.status == "error" and len(server.requests) == 1
    assert out.meta["rejected_parameter"] == "reasoning.effort" and msg in out.meta["provider_message"]
    assert out.meta["reasoning_effort_sent"] == "low"


def test_responses_rejected_temperature_is_recorded(server: FakeServer) -> None:
    server.script.append(Reply(400, {"message": "temperature is not supported for this model"}))
    out = gpt56(server, accepts_temperature=True).complete(req())
    assert server.bodies()[0]["temperature"] == 0.0
    assert out.meta["rejected_parameter"] == "temperature" and out.meta["temperature_sent"] is True


def test_responses_throttling_and_5xx_retried(server: FakeServer) -> None:
    server.script += [Reply(429, {"error": {"message": "Too many requests"}}), Reply(502, "bad gateway")]
    out = gpt56(server).complete(req())
    assert out.status == "ok" and out.meta["retried_codes"] == ["TooManyRequests", "HTTP502"]


def test_responses_failed_status_is_an_error() -> None:
    with pytest.raises(Exception, match="server_error"):
        parse_responses({"status": "failed", "error": {"code": "server_error", "message": "x"}, "output": []})


def test_sigv4_signs_for_bedrock_mantle(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    out = gpt56(server).complete(req())
    assert out.status == "ok"
    auth = server.requests[0][1]["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-central-1/bedrock-mantle/aws4_request" in auth
    assert "wJalrXUtn" not in auth and "X-Amz-Date" in server.requests[0][1]
    assert isinstance(gpt56(server).client()._client._auth, SigV4HttpxAuth)


def test_reasoning_model_gets_room_through_the_probes_own_path() -> None:
    """Under reasoning=direct the probe asks 64 tokens; the Responses request still gives
    GPT-5.6 its config's 4096 (built through make_jobs, as the probe builds requests)."""
    from blindmcq.config.files import load_group
    from blindmcq.datasets.nonsense import generate_nonsenseqa
    from blindmcq.tasks.presentations import build_presentations
    from blindmcq.tasks.probe import make_jobs

    cfg = model_config({**load_model_file("gpt-5.6"), "api": "responses"})
    reasoning = load_group("reasoning", "direct")
    presentations = build_presentations(
        generate_nonsenseqa(0, n_test=1, n_fewshot=0).test, conditions=["blind"], blind_orders=["rot0"],
        forced=False, prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
        reasoning=reasoning,
    )  # fmt: skip
    (job,) = make_jobs(presentations, model_cfg=cfg, reasoning=reasoning)
    assert job.request.max_tokens == 4096 and reasoning.max_tokens == 64  # the probe already gives room
    body = make_backend(cfg).wire_request(job.request)
    assert body["max_output_tokens"] == 4096 and "temperature" not in body
    assert body.get("instructions") == (job.request.system or None) and body["input"] == job.request.user


@pytest.mark.slow  # loads the local Gemma 3 270M (cached conversion: seconds; first ever: ~100 s)
def test_a_server_on_the_local_model_scores_labels_as_the_local_backend(server: FakeServer) -> None:
    """The server answers chat completions from the local model (top log-probabilities of the next token
    after the prompt the local backend reads); the OpenAI backend's label scores then match the local
    backend's own: each label token's log-probability is the same, and the ranking too."""
    import torch

    from blindmcq.backends.local import LocalBackend

    gemma = LocalBackend(model_config(load_model_file("gemma3-270m")))
    gemma.load()
    tok = gemma.tokenizer

    served: list[list[tuple[str, float]]] = []

    def answer(path: str, body: dict) -> Reply:
        messages = {m["role"]: m["content"] for m in body["messages"]}
        prompt = gemma.prompt_text(ModelRequest("g", messages.get("system"), messages["user"]))
        with torch.inference_mode():
            logits = gemma.model(torch.tensor([tok(prompt).input_ids]), logits_to_keep=1).logits[0, -1]
        values, ids = torch.log_softmax(logits.float(), dim=-1).topk(body["top_logprobs"])
        top = [(tok.decode([int(i)]), float(v)) for v, i in zip(values, ids, strict=True)]
        served.append(top)
        return Reply(body=chat_body(top[0][0], top=top))

    server.default = answer  # type: ignore[method-assign]
    cyrillic = ("А", "Б", "В", "Г")
    r = ModelRequest("gemma3-270m", "Оберіть правильну відповідь. Відповідайте лише літерою.",
                     "Якою є Україна за державним устроєм?\nА. федеративною\nБ. конфедеративною\n"
                     "В. унітарною\nГ. республікою\nВідповідь:", choices=cyrillic)  # fmt: skip
    local = gemma.complete(r).choice_logprobs
    remote = backend(server, logprobs=True, top_logprobs=20).complete(r)
    assert local is not None and remote.choice_logprobs is not None and remote.status == "ok"
    listed = dict(served[0])
    outside = remote.meta["labels_outside_top"]
    assert len(outside) < 4, "no label among the top 20: the test prompt is too weak"
    for label, lp_local, lp_remote in zip(cyrillic, local, remote.choice_logprobs, strict=True):
        if label in outside:
            assert lp_remote == float("-inf") and lp_local <= min(listed.values()) + 1e-4
            continue
        # the server's " А" is the local backend's scored continuation (delimiter + label): same number
        assert listed[" " + label] == pytest.approx(lp_local, abs=1e-4)
        # the remote score adds the bare "А" when listed: never below the local one
        assert lp_remote >= lp_local - 1e-4
    best_local = max(range(4), key=lambda i: local[i])
    assert max(range(4), key=lambda i: remote.choice_logprobs[i]) == best_local
