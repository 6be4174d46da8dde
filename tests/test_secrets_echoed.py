"""A secret that reaches the prompt by the safe route (``prompt.system=${secret:MY_PAT}``), sent to a model
that echoes its prompt back, reaches no file the run writes: not the predictions (Parquet and JSON Lines),
the response cache, AnswerPool's files, the report, MLflow's store nor its artifacts.

The model is a real OpenAI-compatible HTTP server on 127.0.0.1 that answers every chat completion with
its whole prompt after the letter "A"; every stage runs as DVC runs it, in a scratch project."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from pipeline.test_pipeline import STAGES, compose_params, run_stage

PAT = "pat_echoed_Zq7Xw2Lm9Rt4Vb6N"


class _Echo(BaseHTTPRequestHandler):
    prompts: list[str] = []  # noqa: RUF012 (what the server was sent, across threads)

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []))
        _Echo.prompts.append(prompt)
        reply = {
            "id": "x", "object": "chat.completion", "model": body.get("model", "m"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"A\nYou said: {prompt}"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _bank(path: Path, n: int = 8) -> None:
    rows = [
        {"id": i, "question": f"Question {i}?", "options": [f"option {i} {w}" for w in "abcd"], "key": i % 4}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _holding(root: Path, value: str) -> list[str]:
    """Every file under ``root`` holding ``value``: as bytes (text files, SQLite pages), and in the string
    columns of Parquet files (their pages may be compressed)."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if value.encode() in path.read_bytes():
            found.append(str(path.relative_to(root)))
        elif path.suffix == ".parquet":
            frame = pd.read_parquet(path)
            text = frame.select_dtypes(include=["object", "string"]).astype(str)
            if text.apply(lambda col: col.str.contains(value, regex=False)).to_numpy().any():
                found.append(str(path.relative_to(root)))
    return found


@pytest.mark.full  # a pipeline against a local server that echoes the key back
def test_an_echoed_secret_reaches_no_output(
    tmp_path: Path, repo_root: Path, echo_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "p"
    for sub in ("conf", "defaults"):
        shutil.copytree(repo_root / sub, work / sub)
    bank = work / "bank.jsonl"
    _bank(bank)
    params = compose_params(
        work,
        [
            "model=openai-local", f"model.base_url={echo_server}", "model.concurrency=2",
            "model@gate_model=longest", "panel=none", "probe.sample=null",
            "prompt.system=secret-env://MY_PAT",
            "dataset=generic-example", f"dataset.path={bank}", f"dataset.dep={bank}", "dataset.format=jsonl",
            "~dataset.option_columns", "+dataset.options=options", "dataset.key=key",
            "dataset.key_format=index", "dataset.id=id",
            "intervention.answerpool.sample=4", "intervention.answerpool.group_size=2",
            f"probe.cache={work}/cache.sqlite",
            f"tracking.uri=sqlite:///{work}/mlruns/mlflow.db",
            f"tracking.artifact_location={work}/mlruns/art",
        ],
    )  # fmt: skip
    assert params["prompt"]["system"] == "secret-env://MY_PAT"  # params.yaml holds the reference only
    (work / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("MY_PAT", PAT)
    monkeypatch.chdir(work)
    for stage in STAGES:
        run_stage(stage)

    predictions = pd.read_parquet(work / "results/predictions/predictions.parquet")
    echoed = predictions[predictions.model == "openai-local"]
    assert len(echoed) > 0 and echoed.raw_response.str.contains("You said:").all()  # the model did echo
    assert echoed.raw_response.str.contains("***", regex=False).all()  # the secret, masked
    assert any(PAT in prompt for prompt in _Echo.prompts)  # the value did reach the model
    assert _holding(work, PAT) == []
    os.environ.pop("MY_PAT", None)
