"""Bedrock batch inference: the cheap way to run large probes, through the same response cache.

Flow: the uncached requests of a probe -> one JSONL input file per job on S3 -> ``CreateModelInvocationJob``
-> ``GetModelInvocationJob`` (``blindmcq batch status``, ``collect``) -> read the ``*.jsonl.out`` files ->
one ``ModelResponse`` per call, stored in the ``ResponseCache`` under the key the online runner uses
(``request_key(backend, request)``).
A later ``run_calls``/``run_probe`` with the same cache then serves every answered call from the cache, so
online and batch never pay twice; calls the batch did not answer come back as ``error`` (not cached) and
the online run retries them.

Input record, one per line (Bedrock user guide, "Format and upload your batch inference data"):
``{"recordId": <cache key>, "modelInput": <body>}``. The recordId is the call's cache key (64 hex digits),
so an output file maps straight back to the cache without a manifest, in any process.

Body per ``invocation_type`` (``batch.invocation_type``; the output's ``modelOutput`` has the matching form):

* ``Converse`` (default): the Converse request body exactly as ``BedrockBackend.converse_params`` builds it
  for the online call, less ``modelId``: ``messages``, ``system``, ``inferenceConfig``,
  ``additionalModelRequestFields`` (user guide, "Format and upload your batch inference data":
  "If you use the Converse type, the format must match the request body of the Converse API").
* ``InvokeModel`` for Anthropic models: the Anthropic Messages API body, ``anthropic_version``
  ``bedrock-2023-05-31``, ``max_tokens``, ``system`` (string), ``messages`` (text blocks), ``temperature``
  when the online call sends one, and the model config's additional fields (e.g. ``thinking``) at the top
  level. Other families under ``InvokeModel`` are refused (use ``Converse``).

Only model families that AWS's batch documentation was seen to list are submitted (``BATCH_FAMILIES``);
any other is refused before anything is uploaded, unless ``batch.family_listed: true`` records that the
user checked "Supported Regions and models for batch inference" for that model. Every batch setting is
validated before any upload (``job_timeout_hours`` 24-168, as CreateModelInvocationJob takes).

Bedrock quotas apply: at least ``min_records`` (100 by default) and at most ``max_records`` (50,000)
records per job; larger sets are split into several jobs. Credentials come from boto3's chain only and
are never read, logged or recorded here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.bedrock import REFUSAL_STOP_REASONS, BedrockBackend, parse_converse_response
from blindmcq.backends.registry import abilities_of
from blindmcq.config.schema import ModelSchema
from blindmcq.engine.cache import ResponseCache, utc_now
from blindmcq.errors import ConfigError, InputError

log = logging.getLogger(__name__)

INVOCATION_TYPES = ("Converse", "InvokeModel")
ANTHROPIC_VERSION = "bedrock-2023-05-31"
DONE = frozenset({"Completed", "PartiallyCompleted", "Failed", "Stopped", "Expired"})
# CreateModelInvocationJob: timeoutDurationInHours 24..168 (botocore service model, bedrock 2023-04-20).
JOB_TIMEOUT_HOURS = (24, 168)
BATCH_DOCS = "https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-supported.html"
# Families whose batch support the documentation was seen to state, the invocation types whose body this
# module builds for them, and where. A family absent here is refused (see the module docstring).
BATCH_FAMILIES: dict[str, dict[str, Any]] = {
    "amazon.nova": {
        "invocation_types": ("Converse",),
        "source": f"'Supported Regions and models for batch inference' ({BATCH_DOCS}): Nova Lite, Micro,"
        " Pro, Premier, Nova 2 Lite",
    },
    "anthropic": {
        "invocation_types": ("Converse", "InvokeModel"),
        "source": "'Code example for batch inference' (https://docs.aws.amazon.com/bedrock/latest/"
        "userguide/batch-inference-example.html): Anthropic Claude 3 Haiku, InvokeModel body",
    },
}
_GEO_PREFIX = re.compile(r"^(us|eu|apac|global|us-gov|jp|au|ca)\.")


def batch_family(model_id: str) -> str | None:
    """The ``BATCH_FAMILIES`` key of a model or inference-profile id, or None when none is listed."""
    bare = _GEO_PREFIX.sub("", model_id)
    return next((family for family in BATCH_FAMILIES if bare.startswith(family)), None)


@dataclass(frozen=True)
class BatchSettings:
    """The ``batch:`` section of a model config (or of the probe config), typed: the config schema's
    checker builds it from a mapping (``config.schema.typed(BatchSettings, section, "batch")``: types,
    unknown keys, ranges), then :meth:`check`."""

    role_arn: str
    input_uri: str  # s3://bucket/prefix: input files go under it
    output_uri: str  # s3://bucket/prefix: Bedrock writes <job id>/<file>.jsonl.out under it
    invocation_type: str = "Converse"
    region: str | None = None  # default: the model config's first region
    min_records: int = 100
    max_records: int = 50_000
    job_timeout_hours: int | None = None
    s3_endpoint_url: str | None = None  # a local S3 stand-in (tests)
    family_listed: bool = False  # the user checked the batch documentation for an unlisted family

    def check(self, key: str = "batch") -> None:
        """The checks past the types (the schema's checker calls it): every location given, an IAM role
        ARN, a known invocation type, Bedrock's record and timeout limits; errors name ``key.field``."""
        for required in ("role_arn", "input_uri", "output_uri"):
            if not getattr(self, required):
                raise ConfigError(f"{key}.{required}", "missing")
        for name in ("input_uri", "output_uri"):
            split_s3_uri(getattr(self, name), key=f"{key}.{name}")
        if not re.fullmatch(r"arn:aws[a-z-]*:iam::\d{12}:role/\S+", self.role_arn):
            raise ConfigError(f"{key}.role_arn", f"expected an IAM role ARN, got {self.role_arn!r}")
        if self.invocation_type not in INVOCATION_TYPES:
            raise ConfigError(f"{key}.invocation_type", f"expected one of {INVOCATION_TYPES}")
        if not 1 <= self.min_records <= self.max_records:
            raise ConfigError(f"{key}.min_records", "need 1 <= min_records <= max_records")
        if self.max_records > 50_000:
            raise ConfigError(f"{key}.max_records", "Bedrock takes at most 50,000 records per job")
        low, high = JOB_TIMEOUT_HOURS
        if self.job_timeout_hours is not None and not low <= self.job_timeout_hours <= high:
            raise ConfigError(
                f"{key}.job_timeout_hours", f"must be {low}-{high} hours, got {self.job_timeout_hours}"
            )


def check_batchable(model_id: str, settings: BatchSettings, key: str = "batch") -> str:
    """The model's batch family, or a ConfigError (before any upload) naming the documentation."""
    family = batch_family(model_id)
    if family is None:
        if settings.family_listed:
            return "user-checked"
        raise ConfigError(
            "model.model_id",
            f"{model_id}: its family is not among those the batch documentation was seen to list"
            f" ({', '.join(BATCH_FAMILIES)}; {BATCH_DOCS}). Check that page, then set"
            f" {key}.family_listed=true, or run online",
        )
    allowed = BATCH_FAMILIES[family]["invocation_types"]
    if settings.invocation_type not in allowed:
        raise ConfigError(
            f"{key}.invocation_type",
            f"{family} batch bodies are built here as {', '.join(allowed)}, not {settings.invocation_type}",
        )
    return family


@dataclass(frozen=True)
class BatchJob:
    """One submitted model invocation job and the cache keys it answers."""

    job_arn: str
    job_name: str
    input_uri: str
    output_uri: str
    keys: tuple[str, ...]


def split_s3_uri(uri: str, *, key: str = "s3 uri") -> tuple[str, str]:
    """``s3://bucket/a/b`` -> ``("bucket", "a/b")`` (prefix without a trailing slash)."""
    match = re.fullmatch(r"s3://([^/]+)/?(.*)", uri or "")
    if not match:
        raise ConfigError(key, f"expected s3://bucket/prefix, got {uri!r}")
    return match.group(1), match.group(2).strip("/")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


# ---------------------------------------------------------------- request bodies


def _is_anthropic(model_id: str) -> bool:
    return "anthropic." in model_id


def model_input(backend: BedrockBackend, request: ModelRequest, invocation_type: str) -> dict[str, Any]:
    """The ``modelInput`` body for one request (see the module docstring)."""
    wire, temperature_sent = backend.converse_params(request)
    wire.pop("modelId")
    if invocation_type == "Converse":
        return wire
    if invocation_type != "InvokeModel":
        raise ConfigError("batch.invocation_type", f"expected one of {INVOCATION_TYPES}")
    if not _is_anthropic(backend.model_id):
        raise ConfigError(
            "batch.invocation_type",
            f"InvokeModel bodies are built for Anthropic only, not {backend.model_id}",
        )
    body: dict[str, Any] = {
        "anthropic_version": ANTHROPIC_VERSION,
        "max_tokens": wire["inferenceConfig"]["maxTokens"],
        "messages": [
            {"role": m["role"], "content": [{"type": "text", "text": c["text"]} for c in m["content"]]}
            for m in wire["messages"]
        ],
    }
    if "system" in wire:
        body["system"] = "".join(block["text"] for block in wire["system"])
    if temperature_sent:
        body["temperature"] = wire["inferenceConfig"]["temperature"]
    body.update(wire.get("additionalModelRequestFields", {}))
    return body


def parse_model_output(output: Mapping[str, Any], invocation_type: str) -> ModelResponse:
    """A ``modelOutput`` (Converse response, or Anthropic Messages response) -> ModelResponse."""
    if invocation_type == "Converse":
        return parse_converse_response(output)
    blocks = output.get("content") or []
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    thinking = "".join(b.get("thinking", "") for b in blocks if b.get("type") == "thinking")
    stop = output.get("stop_reason")
    usage = output.get("usage") or {}
    meta: dict[str, Any] = {"stop_reason": stop}
    if thinking:
        meta["reasoning_text"] = thinking
    refused = stop == "refusal" or stop in REFUSAL_STOP_REASONS
    return ModelResponse(
        text=text,
        status="refused" if refused else "ok",
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        meta=meta,
    )


# ---------------------------------------------------------------- the steps


def _token(keys: Sequence[str], model_id: str) -> str:
    return hashlib.sha256(f"{model_id}\n{chr(10).join(keys)}".encode()).hexdigest()[:32]


def _job_name(model_name: str, token: str, part: int) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", model_name).strip("-")[:30] or "model"
    return f"blindmcq-{slug}-{token[:12]}-{part}"


def submit(
    requests: Mapping[str, ModelRequest],
    backend: BedrockBackend,
    settings: BatchSettings,
    *,
    s3: Any,
    bedrock: Any,
) -> list[BatchJob]:
    """Upload the input files and create one job per ``max_records`` chunk.

    Job names and ``clientRequestToken`` derive from the keys, so resubmitting after a crash returns the
    job already created instead of paying for a second one (the API is idempotent on the token).
    """
    keys = list(requests)
    check_batchable(backend.model_id, settings)  # before any upload
    if len(keys) < settings.min_records:
        raise ConfigError(
            "batch.min_records",
            f"{len(keys)} uncached calls, below the {settings.min_records} a batch job needs; run online",
        )
    in_bucket, in_prefix = split_s3_uri(settings.input_uri, key="batch.input_uri")
    model_name = next(iter(requests.values())).model
    submitted: list[BatchJob] = []
    for part, start in enumerate(range(0, len(keys), settings.max_records)):
        chunk = keys[start : start + settings.max_records]
        token = _token(chunk, backend.model_id)
        name = _job_name(model_name, token, part)
        lines = [
            json.dumps(
                {
                    "recordId": key,
                    "modelInput": model_input(backend, requests[key], settings.invocation_type),
                },
                ensure_ascii=False,
            )
            for key in chunk
        ]
        object_key = _join(in_prefix, f"{name}.jsonl")
        s3.put_object(Bucket=in_bucket, Key=object_key, Body=("\n".join(lines) + "\n").encode("utf-8"))
        input_uri = f"s3://{in_bucket}/{object_key}"
        output_uri = settings.output_uri.rstrip("/") + f"/{name}/"
        job: dict[str, Any] = {
            "jobName": name,
            "roleArn": settings.role_arn,
            "clientRequestToken": token,
            "modelId": backend.model_id,
            "modelInvocationType": settings.invocation_type,
            "inputDataConfig": {"s3InputDataConfig": {"s3Uri": input_uri, "s3InputFormat": "JSONL"}},
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": output_uri}},
        }
        if settings.job_timeout_hours:
            job["timeoutDurationInHours"] = int(settings.job_timeout_hours)
        arn = bedrock.create_model_invocation_job(**job)["jobArn"]
        log.info("batch job %s: %d records -> %s", name, len(chunk), output_uri)
        submitted.append(BatchJob(arn, name, input_uri, output_uri, tuple(chunk)))
    return submitted


def _output_lines(s3: Any, output_uri: str) -> list[tuple[str, int, str]]:
    bucket, prefix = split_s3_uri(output_uri)
    found: list[tuple[str, int, str]] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=_join(prefix, "")):
        for obj in page.get("Contents", []):
            if obj["Key"].endswith(".jsonl.out"):
                body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read().decode("utf-8")
                uri = f"s3://{bucket}/{obj['Key']}"
                found.extend((uri, n, line) for n, line in enumerate(body.splitlines(), 1) if line.strip())
    return found


def read_outputs(
    jobs: Sequence[BatchJob], *, s3: Any, invocation_type: str = "Converse"
) -> dict[str, ModelResponse]:
    """Cache key -> response for each record found in the jobs' output files (errors included)."""
    expected = {key for job in jobs for key in job.keys}
    responses: dict[str, ModelResponse] = {}
    for job in jobs:
        for uri, number, line in _output_lines(s3, job.output_uri):
            try:
                record = json.loads(line)
                key = str(record["recordId"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                log.warning("%s", InputError(f"unreadable output record ({exc})", file=uri, line=number))
                continue
            if key not in expected:
                log.warning("%s", InputError(f"unexpected recordId {key[:16]}...", file=uri, line=number))
                continue
            error = record.get("error")
            output = record.get("modelOutput")
            if error or not isinstance(output, Mapping):
                error = error if isinstance(error, Mapping) else {"errorMessage": "no modelOutput"}
                code = error.get("errorCode", "BatchRecordError")
                responses[key] = ModelResponse(
                    text="", status="error", error=f"Batch{code}: {error.get('errorMessage', '')}".strip(),
                    meta={"batch_job": job.job_arn, "error_code": code},
                )  # fmt: skip
                continue
            try:
                response = parse_model_output(output, invocation_type)
            except (AttributeError, KeyError, TypeError) as exc:
                response = ModelResponse(text="", status="error", error=f"BatchOutputMalformed: {exc}")
            response.meta["batch_job"] = job.job_arn
            responses[key] = response
    return responses


def collect(
    jobs: Sequence[BatchJob],
    requests: Mapping[str, ModelRequest],
    *,
    s3: Any,
    cache: ResponseCache,
    backend_name: str,
    invocation_type: str = "Converse",
    statuses: Mapping[str, str] | None = None,
) -> dict[str, ModelResponse]:
    """Read the outputs into the cache; every submitted key gets a response (missing ones: ``error``)."""
    found = read_outputs(jobs, s3=s3, invocation_type=invocation_type)
    out: dict[str, ModelResponse] = {}
    for job in jobs:
        status = (statuses or {}).get(job.job_arn, "unknown")
        for key in job.keys:
            response = found.get(key) or ModelResponse(
                text="", status="error",
                error=f"BatchRecordMissing: no output record (job {job.job_name} {status})",
                meta={"batch_job": job.job_arn, "error_code": "BatchRecordMissing"},
            )  # fmt: skip
            response.meta.setdefault("invocation", "batch")
            cache.put(key, response, backend=backend_name, model=requests[key].model, time=utc_now())
            out[key] = response
    return out


def make_bedrock_backend(cfg: ModelSchema) -> BedrockBackend:
    """The backend whose name and request bodies the batch shares with online calls; it never calls."""
    if not abilities_of(cfg).batch:
        raise ConfigError("model.backend", f"batch inference needs a bedrock model, got {cfg.backend!r}")

    def no_client(region: str) -> Any:
        raise RuntimeError("the batch path makes no online calls")

    return BedrockBackend(cfg, client_factory=no_client)
