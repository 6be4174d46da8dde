"""Bedrock batch inference, offline: the control plane stubbed with botocore's Stubber (request shapes
asserted), S3 served by moto's server on 127.0.0.1, and a fake batch worker that answers the uploaded
input file the way Bedrock does (one ``.jsonl.out`` per input file, errors in place of modelOutput)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from blindmcq.backends.base import ModelResponse, request_key
from blindmcq.backends.bedrock import BedrockBackend
from blindmcq.config.files import load_group, load_label_schemes, load_model_file
from blindmcq.config.schema import BedrockModel, model_config, typed, validate
from blindmcq.datasets.nonsense import generate_nonsenseqa
from blindmcq.engine.batch import (
    BatchSettings,
    collect,
    make_bedrock_backend,
    model_input,
    parse_model_output,
    split_s3_uri,
    submit,
)
from blindmcq.engine.cache import ResponseCache
from blindmcq.errors import ConfigError
from blindmcq.labels import label_symbols_by_scheme
from blindmcq.tasks.parsing import interpret
from blindmcq.tasks.presentations import build_presentations
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, make_jobs, run_calls

SYMBOLS = label_symbols_by_scheme(load_label_schemes())  # the shipped label schemes


def interpret_shipped(p: Any, r: ModelResponse) -> Any:
    return interpret(p, r, symbols=SYMBOLS)


BUCKET = "blindmcq-batch-test"
ROLE = "arn:aws:iam::123456789012:role/BedrockBatch"
ARN = "arn:aws:bedrock:eu-central-1:123456789012:model-invocation-job/abc123def456"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    with pytest.MonkeyPatch.context() as mp:
        # fake credentials from the environment only; nothing real is reachable or used
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": "eu-central-1",
        }.items():
            mp.setenv(name, value)
        mp.delenv("AWS_PROFILE", raising=False)
        port = _free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.stop()


@pytest.fixture
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Any:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    client = boto3.client("s3", region_name="eu-central-1", endpoint_url=s3_endpoint)
    bucket = f"{BUCKET}-{abs(hash(request.node.name)) % 10**8}"
    client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
    client.test_bucket = bucket  # type: ignore[attr-defined]
    return client


@pytest.fixture(scope="module")
def model_cfg() -> BedrockModel:
    return model_config(load_model_file("sonnet-4.6"))


@pytest.fixture(scope="module")
def probe_jobs(model_cfg: BedrockModel) -> list[tuple[str, Any]]:
    # synthetic items (NonsenseQA): the batch path needs real rendered prompts, not the real bank
    items = generate_nonsenseqa(0, n_test=15, n_fewshot=0).test
    presentations = build_presentations(
        items, conditions=["blind"], blind_orders="all", forced=False,
        prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
        reasoning=load_group("reasoning", "direct"),
    )  # fmt: skip
    jobs = make_jobs(presentations, model_cfg=model_cfg, reasoning=load_group("reasoning", "direct"))
    return [(f"{job.presentation.item_id}/{job.presentation.order_id}", job) for job in jobs]


def settings_for(s3: Any, **extra: Any) -> BatchSettings:
    bucket = s3.test_bucket
    return typed(
        BatchSettings,
        {"role_arn": ROLE, "input_uri": f"s3://{bucket}/in", "output_uri": f"s3://{bucket}/out", **extra},
        "batch",
    )  # fmt: skip


class FakeWorker:
    """Does what the batch service does while the job runs: reads the input, writes ``<file>.jsonl.out``.

    Drops ``drop`` records, answers ``fail`` with an error object, adds one unreadable line."""

    def __init__(self, s3: Any, *, drop: int = 1, fail: int = 1) -> None:
        self.s3, self.drop, self.fail = s3, drop, fail
        self.input_uri = self.output_uri = ""
        self.records: list[dict[str, Any]] = []

    def run(self) -> None:
        bucket, key = split_s3_uri(self.input_uri)
        body = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
        self.records = [json.loads(line) for line in body.splitlines()]
        out = []
        for n, record in enumerate(self.records):
            if n < self.drop:
                continue
            if n < self.drop + self.fail:
                out.append({**record, "error": {"errorCode": 400, "errorMessage": "Malformed input"}})
                continue
            output = {
                "output": {"message": {"role": "assistant", "content": [{"text": "C"}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 90 + n, "outputTokens": 1},
            }
            out.append({**record, "modelOutput": output})
        out_bucket, prefix = split_s3_uri(self.output_uri)
        name = key.rsplit("/", 1)[-1]
        text = "\n".join(json.dumps(r, ensure_ascii=False) for r in out) + "\n{not json\n"
        self.s3.put_object(Bucket=out_bucket, Key=f"{prefix}/abc123def456/{name}.out", Body=text.encode())
        self.s3.put_object(Bucket=out_bucket, Key=f"{prefix}/abc123def456/manifest.json.out", Body=b"{}")


def stubbed_bedrock(
    s3: Any, settings: BatchSettings, model_id: str, n_records: int, worker: FakeWorker,
    polls: tuple[str, ...] = ("Submitted", "InProgress", "Completed"),
):  # fmt: skip
    client = boto3.client("bedrock", region_name="eu-central-1")
    stub = Stubber(client)
    expected = {
        "jobName": ANY,
        "roleArn": ROLE,
        "clientRequestToken": ANY,
        "modelId": model_id,
        "modelInvocationType": "Converse",
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": ANY, "s3InputFormat": "JSONL"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": ANY}},
    }
    stub.add_response("create_model_invocation_job", {"jobArn": ARN}, expected)
    for status in polls:
        stub.add_response(
            "get_model_invocation_job",
            {"jobArn": ARN, "jobName": "x", "modelId": model_id, "roleArn": ROLE, "status": status,
             "submitTime": "2025-01-01T00:00:00Z",
             "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "s3://b/i.jsonl"}},
             "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://b/o/"}}},
            {"jobIdentifier": ARN},
        )  # fmt: skip
    # capture where the job reads and writes, from the real create call, for the fake worker
    original = client.create_model_invocation_job

    def create(**params: Any) -> Any:
        worker.input_uri = params["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]
        worker.output_uri = params["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"]
        assert worker.input_uri.startswith(settings.input_uri + "/") and worker.input_uri.endswith(".jsonl")
        assert worker.output_uri.startswith(settings.output_uri + "/")
        return original(**params)

    client.create_model_invocation_job = create  # type: ignore[method-assign]
    return client, stub


def test_batch_round_trip_fills_the_online_cache(s3, model_cfg, probe_jobs, tmp_path) -> None:
    """What ``blindmcq batch submit`` and ``collect`` do, step by step: the upload, the job, the outputs
    read into the cache under the online keys, errors kept out of it."""
    settings = settings_for(s3, min_records=10)
    worker = FakeWorker(s3, drop=1, fail=1)
    bedrock, stub = stubbed_bedrock(s3, settings, model_cfg.model_id, len(probe_jobs), worker, polls=())
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = make_bedrock_backend(model_cfg)
    requests = {request_key(backend, job.request): job.request for _, job in probe_jobs}
    with stub:
        jobs = submit(requests, backend, settings, s3=s3, bedrock=bedrock)
        stub.assert_no_pending_responses()
    assert [job.job_arn for job in jobs] == [ARN] and set(jobs[0].keys) == set(requests)
    worker.run()
    responses = collect(jobs, requests, s3=s3, cache=cache, backend_name=backend.name,
                        statuses={ARN: "Completed"})  # fmt: skip

    # the input file: one record per distinct call, recordId = the online cache key, Converse body
    assert len(worker.records) == len(probe_jobs) == 15 * 8
    first_job = probe_jobs[0][1]
    keyer = BedrockBackend(model_cfg, client_factory=lambda region: None)
    assert worker.records[0]["recordId"] == request_key(keyer, first_job.request)
    body = worker.records[0]["modelInput"]
    assert set(body) == {"messages", "inferenceConfig"}
    assert body["messages"][0]["content"][0]["text"] == first_job.request.user
    assert body["inferenceConfig"] == {"maxTokens": 64, "temperature": 0.0}

    # every call answered: the dropped record and the failed one as errors, never dropped
    assert set(responses) == set(requests)
    by_status: dict[str, list[ModelResponse]] = {}
    for response in responses.values():
        by_status.setdefault(response.status, []).append(response)
    assert len(by_status["ok"]) == len(probe_jobs) - 2
    errors = sorted(r.error or "" for r in by_status["error"])
    assert errors[0].startswith("Batch400: Malformed input")
    assert errors[1].startswith("BatchRecordMissing") and "Completed" in errors[1]

    # the online runner now pays only for the two calls the batch did not answer
    calls: list[dict[str, Any]] = []

    class Runtime:
        def converse(self, **params: Any) -> dict[str, Any]:
            calls.append(params)
            return {"output": {"message": {"content": [{"text": "B"}]}}, "stopReason": "end_turn",
                    "usage": {"inputTokens": 1, "outputTokens": 1}}  # fmt: skip

    online = BedrockBackend(model_cfg, client_factory=lambda region: Runtime())
    records = run_calls(
        [job for _, job in probe_jobs],
        online,
        cache=cache,
        interpret=interpret_shipped,
        progress=False,
        batch_size=1,
    )
    assert len(calls) == 2
    assert sum(r.cached for r in records) == len(probe_jobs) - 2
    assert {r.picked_slot for r in records if r.cached} == {2}
    assert all(r.parse_status == "ok" for r in records)
    cache.close()


def test_too_few_calls_are_refused_before_any_upload(s3, model_cfg, probe_jobs) -> None:
    backend = make_bedrock_backend(model_cfg)
    requests = {request_key(backend, job.request): job.request for _, job in probe_jobs[:5]}
    bedrock = boto3.client("bedrock", region_name="eu-central-1")
    with Stubber(bedrock), pytest.raises(ConfigError, match=r"batch\.min_records.*5 uncached calls"):
        submit(requests, backend, settings_for(s3), s3=s3, bedrock=bedrock)  # min_records 100
    assert s3.list_objects_v2(Bucket=s3.test_bucket).get("KeyCount", 0) == 0


def test_anthropic_invoke_model_body_and_response(model_cfg, probe_jobs) -> None:
    backend = BedrockBackend(
        replace(model_cfg, additional_fields={"top_k": 1}), client_factory=lambda region: None
    )
    request = probe_jobs[0][1].request
    body = model_input(backend, request, "InvokeModel")
    assert body == {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": [{"type": "text", "text": request.user}]}],
        "temperature": 0.0,
        "top_k": 1,
    }
    think = replace(request, reasoning="thinking", extra={"thinking_budget_tokens": 2048})
    thinking = model_input(backend, think, "InvokeModel")
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert thinking["max_tokens"] == 64 + 2048 and "temperature" not in thinking
    output = {
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "В"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 120, "output_tokens": 40},
    }
    parsed = parse_model_output(output, "InvokeModel")
    assert (parsed.text, parsed.status, parsed.input_tokens, parsed.output_tokens) == ("В", "ok", 120, 40)
    assert parsed.meta["reasoning_text"] == "hmm"
    assert parse_model_output({**output, "stop_reason": "refusal"}, "InvokeModel").status == "refused"
    nova_cfg = replace(model_cfg, model_id="eu.amazon.nova-pro-v1:0")
    nova = BedrockBackend(nova_cfg, client_factory=lambda r: None)
    with pytest.raises(ConfigError, match="invocation_type"):
        model_input(nova, request, "InvokeModel")


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"input_uri": "s3://b/i", "output_uri": "s3://b/o"}, "batch.role_arn"),
        ({"role_arn": ROLE, "input_uri": "http://b/i", "output_uri": "s3://b/o"}, "batch.input_uri"),
        ({"role_arn": ROLE, "input_uri": "s3://b/i", "output_uri": "s3://b/o", "bogus": 1}, "batch.bogus"),
        ({"role_arn": ROLE, "input_uri": "s3://b/i", "output_uri": "s3://b/o", "invocation_type": "X"},
         "batch.invocation_type"),
    ],
)  # fmt: skip
def test_bad_batch_settings_name_the_key(cfg: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        typed(BatchSettings, cfg, "batch")


# ---------------------------------------------------------------- the `blindmcq batch` command line


@pytest.fixture
def nonsense_items(tmp_path: Any) -> Any:
    """Synthetic items (NonsenseQA, generated): the CLI reads them as the probe stage reads the corpus."""
    from blindmcq.datasets.items import write_items
    from blindmcq.datasets.nonsense import generate_nonsenseqa

    path = tmp_path / "items.jsonl"
    write_items(path, generate_nonsenseqa(0, n_test=6, n_fewshot=0).test)
    return path


def cli_flags(s3: Any, **extra: Any) -> dict[str, Any]:
    bucket = s3.test_bucket
    return {"role_arn": ROLE, "input_uri": f"s3://{bucket}/in", "output_uri": f"s3://{bucket}/out",
            "min_records": 10, **extra}  # fmt: skip


def test_cli_submit_status_collect_then_the_probe_answers_from_the_cache(
    s3: Any, nonsense_items: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from blindmcq.cli.batch import compose
    from blindmcq.datasets.items import read_items
    from blindmcq.tasks.batch import collect_cmd, status_cmd, submit_cmd
    from blindmcq.tasks.probe import run_probe

    cache_path = tmp_path / "cache.sqlite"
    overrides = ["model=nova-pro", "probe.sample=null", f"probe.cache={cache_path}"]
    params = compose(overrides)
    config = validate(params, file=None)  # the composed config, typed where it enters (as the command does)
    settings = settings_for(s3, min_records=10)
    worker = FakeWorker(s3, drop=1, fail=1)
    bedrock, stub = stubbed_bedrock(s3, settings, params["model"]["model_id"], 0, worker)
    # the stub's queue: create, then three polls (Submitted, InProgress, Completed): status sees the
    # first, collect's first look sees InProgress (left alone), its second sees Completed
    with stub:
        jobs = submit_cmd(config, cli_flags(s3), label_schemes=load_label_schemes(),
                          state_dir=tmp_path / "batch", items_path=nonsense_items,
                          s3=s3, bedrock=bedrock)  # fmt: skip
        assert len(jobs) == 1
        n = len(jobs[0].keys)
        assert n == len(set(jobs[0].keys)) >= 10
        worker.run()
        assert status_cmd(state_dir=tmp_path / "batch", bedrock=bedrock) == {jobs[0].job_name: "Submitted"}
        assert collect_cmd(state_dir=tmp_path / "batch", s3=s3, bedrock=bedrock)["running"] == 1
        counts = collect_cmd(state_dir=tmp_path / "batch", s3=s3, bedrock=bedrock)
    assert counts == {"jobs": 1, "records": n, "ok": n - 2, "error": 2, "running": 0}
    manifest = json.loads(next((tmp_path / "batch").glob("*.json")).read_text())
    assert manifest["collected"] is True and manifest["family"] == "amazon.nova"
    assert "testing" not in json.dumps(manifest)  # no credential in the manifest
    # the uploaded bodies are the online Converse bodies (less modelId), keyed by the online cache key
    assert all(set(r["modelInput"]) <= {"messages", "system", "inferenceConfig"} for r in worker.records)
    assert {r["recordId"] for r in worker.records} == set(jobs[0].keys)

    # the probe: every answered call from the cache; only the dropped and the failed record go online
    calls: list[dict[str, Any]] = []

    class Client:
        def converse(self, **params: Any) -> dict[str, Any]:
            calls.append(params)
            return {"output": {"message": {"role": "assistant", "content": [{"text": "B"}]}},
                    "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1}}  # fmt: skip

    model = model_config(params["model"])  # the composed model group, typed where it enters
    backend = BedrockBackend(model, client_factory=lambda region: Client())
    frame = run_probe(
        read_items(nonsense_items), model_cfg=model,
        setup=PresentationSetup.from_params(config, load_label_schemes()),
        engine=EngineSettings(cache_path, progress=False), backend=backend,
    )  # fmt: skip
    assert len(calls) == 2
    assert int(frame["cached"].sum()) == len(frame) - 2
    # a second submit finds nothing to send
    assert submit_cmd(config, cli_flags(s3), label_schemes=load_label_schemes(),
                      state_dir=tmp_path / "batch", items_path=nonsense_items,
                      s3=s3, bedrock=bedrock) == []  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "flags", "key"),
    [
        (["model=nova-pro"], {"job_timeout_hours": 200}, "batch.job_timeout_hours"),
        (["model=nova-pro"], {"job_timeout_hours": 12}, "batch.job_timeout_hours"),
        (["model=nova-pro"], {"role_arn": "my-role"}, "batch.role_arn"),
        (["model=llama-3.3-70b"], {}, "model.model_id"),  # family not listed for batch
        (["model=gemma3-270m"], {}, "model.backend"),  # not a Bedrock model
        (["model=gpt-5.6", "model.api=responses"], {}, "model.api"),
        (["model=sonnet-4.6"], {"invocation_type": "Bogus"}, "batch.invocation_type"),
        (["model=nova-pro"], {"invocation_type": "InvokeModel"}, "batch.invocation_type"),
    ],
)
def test_cli_refuses_before_any_upload(
    s3: Any, nonsense_items: Any, tmp_path: Any, overrides: list[str], flags: dict[str, Any], key: str
) -> None:
    from blindmcq.cli.batch import compose
    from blindmcq.tasks.batch import submit_cmd

    class NoBedrock:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"bedrock.{name} called")

    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        submit_cmd(
            validate(compose([*overrides, f"probe.cache={tmp_path / 'c.sqlite'}"]), file=None),
            cli_flags(s3, **flags),
            label_schemes=load_label_schemes(),
            state_dir=tmp_path / "batch",
            items_path=nonsense_items,
            s3=s3,
            bedrock=NoBedrock(),
        )
    assert s3.list_objects_v2(Bucket=s3.test_bucket).get("KeyCount", 0) == 0
    assert not (tmp_path / "batch").exists()


def test_cli_lists_batch_and_maps_errors_to_exit_2(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from blindmcq.cli import main

    assert main(["--help"]) == 0 and "batch" in capsys.readouterr().out
    code = main(
        [
            "batch",
            "submit",
            "model=nova-pro",
            "--role-arn",
            ROLE,
            "--input-uri",
            "s3://b/i",
            "--output-uri",
            "s3://b/o",
            "--job-timeout-hours",
            "500",
            "--state-dir",
            str(tmp_path),
        ]
    )
    assert code == 2 and "batch.job_timeout_hours" in capsys.readouterr().err
