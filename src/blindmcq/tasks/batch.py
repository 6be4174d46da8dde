"""``blindmcq batch submit|status|collect``: the probe's uncached calls through Bedrock batch inference.

    blindmcq batch submit [OVERRIDES...] [--role-arn ARN --input-uri S3 --output-uri S3 ...]
    blindmcq batch status
    blindmcq batch collect

``submit`` composes the config as the probe stage does (Hydra overrides, e.g. ``model=nova-pro
probe.sample=null``), finds the calls the response cache lacks by running the probe itself against a
recording stand-in for the model (so the requests and their cache keys are the probe's own), validates
every batch setting and the model's batch family, then writes the JSONL to S3 and creates the jobs
(``blindmcq.engine.batch.submit``). One manifest per job goes to ``results/batch/<job name>.json``.
``status`` polls the jobs; ``collect`` reads the outputs of finished jobs into the same response cache
under the online keys, so the next ``dvc repro`` (or ``blindmcq`` probe) answers from the cache.
Batch settings come from the model config's ``batch:`` section, the config's top-level ``batch:``, and
the flags, in that order of precedence (flags win). Credentials: boto3's chain only, never recorded.

It lives in ``tasks/``: it runs the probe task, and the engine imports no task. The command line, with
the Hydra compose, is ``blindmcq.cli.batch``; this module is its core.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from blindmcq import paths
from blindmcq.atomic import write_text
from blindmcq.backends.base import ModelRequest, ModelResponse, request_key
from blindmcq.config.schema import BedrockModel, Config, Labels, Probe, typed
from blindmcq.engine.batch import (
    DONE,
    BatchJob,
    BatchSettings,
    check_batchable,
    collect,
    make_bedrock_backend,
    submit,
)
from blindmcq.engine.cache import ResponseCache
from blindmcq.errors import ConfigError, InputError

STATE_DIR = paths.RESULTS / "batch"
FLAGS = {
    "role_arn": "--role-arn", "input_uri": "--input-uri", "output_uri": "--output-uri",
    "invocation_type": "--invocation-type", "region": "--region", "job_timeout_hours": "--job-timeout-hours",
    "min_records": "--min-records", "s3_endpoint_url": "--s3-endpoint-url",
}  # fmt: skip


class _Recorder:
    """Stands in for the model inside ``run_probe``: same name, endpoint and wire request (so the same
    cache keys); records each request the runner would send and answers ``error`` (never cached)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.name = real.name
        self.endpoint = getattr(real, "endpoint", None)
        if hasattr(real, "abilities"):
            self.abilities = real.abilities
        if hasattr(real, "wire_request"):
            self.wire_request = real.wire_request
        self.concurrency = 8
        self.requests: dict[str, ModelRequest] = {}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests[request_key(self.real, request)] = request
        meta = {"error_code": "BatchPending"}
        return ModelResponse(text="", status="error", error="BatchPending", meta=meta)


def pending_requests(
    config: Config,
    backend: Any,
    items_path: Path = paths.ITEMS,
    *,
    label_schemes: Mapping[str, Labels],
) -> dict[str, Any]:
    """Cache key -> request for every call the probe would make that the cache lacks; ``label_schemes``
    as the probe stage reads them."""
    from blindmcq.datasets.items import read_items
    from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe, sample_items

    if not Path(items_path).is_file():
        raise InputError("no corpus: run `dvc repro corpus` first", file=str(items_path))
    probe: Probe = config.group("probe")
    items = sample_items(read_items(items_path), probe.sample, probe.seed)
    recorder = _Recorder(backend)
    run_probe(
        items, config.group("model"), PresentationSetup.from_params(config, label_schemes),
        EngineSettings(probe.cache, progress=False), backend=recorder,
    )  # fmt: skip
    return recorder.requests


def settings_from(config: Config, flags: Mapping[str, Any]) -> BatchSettings:
    """The model's ``batch:`` settings (only a Bedrock model has them), overridden by the command's flags."""
    model = config.group("model")
    own = model.batch if isinstance(model, BedrockModel) else None
    merged = dict(own or {})
    merged.update({k: v for k, v in flags.items() if v is not None})
    return typed(BatchSettings, merged, "batch")


def _clients(settings: BatchSettings, backend: Any) -> tuple[Any, Any]:
    import boto3

    region = settings.region or backend.pool.regions[0]
    return (
        boto3.client("s3", region_name=region, endpoint_url=settings.s3_endpoint_url),
        boto3.client("bedrock", region_name=region),
    )


def submit_cmd(
    config: Config,
    flags: Mapping[str, Any],
    *,
    label_schemes: Mapping[str, Labels],
    state_dir: Path = STATE_DIR,
    items_path: Path = paths.ITEMS,
    s3: Any = None,
    bedrock: Any = None,
) -> list[BatchJob]:
    """Validate, find the uncached calls of the composed config (what ``blindmcq batch submit`` composes
    from its overrides), upload and create the jobs; one manifest per job."""
    model = config.group("model")
    if (
        isinstance(model, BedrockModel) and model.api != "converse"
    ):  # other backends stop at make_bedrock_backend
        raise ConfigError("model.api", "batch inference takes Converse or InvokeModel bodies, not responses")
    settings = settings_from(config, flags)  # every setting checked before anything else happens
    backend = make_bedrock_backend(model)
    family = check_batchable(backend.model_id, settings)
    requests = pending_requests(config, backend, items_path, label_schemes=label_schemes)
    if not requests:
        print("nothing to submit: the cache answers every call")
        return []
    if s3 is None or bedrock is None:
        s3, bedrock = _clients(settings, backend)
    jobs = submit(requests, backend, settings, s3=s3, bedrock=bedrock)
    for job in jobs:
        manifest = {
            "job_arn": job.job_arn, "job_name": job.job_name, "input_uri": job.input_uri,
            "output_uri": job.output_uri, "keys": list(job.keys), "model": model.name,
            "model_id": backend.model_id, "backend": backend.name, "family": family,
            "invocation_type": settings.invocation_type,
            "region": settings.region or backend.pool.regions[0], "s3_endpoint_url": settings.s3_endpoint_url,
            "cache": config.group("probe").cache, "collected": False,
        }  # fmt: skip
        write_text(Path(state_dir) / f"{job.job_name}.json", json.dumps(manifest, indent=2) + "\n")
        print(f"submitted {job.job_name}: {len(job.keys)} records -> {job.output_uri}")
    return jobs


def manifests(state_dir: Path = STATE_DIR) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted(Path(state_dir).glob("*.json")):
        try:
            out.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable batch manifest ({exc})", file=str(path)) from exc
    return out


def _bedrock_for(manifest: Mapping[str, Any]) -> Any:
    import boto3

    return boto3.client("bedrock", region_name=manifest["region"])


def status_cmd(*, state_dir: Path = STATE_DIR, bedrock: Any = None) -> dict[str, str]:
    """Job name -> status of every job not yet collected."""
    statuses: dict[str, str] = {}
    for _, manifest in manifests(state_dir):
        if manifest.get("collected"):
            continue
        client = bedrock or _bedrock_for(manifest)
        reply = client.get_model_invocation_job(jobIdentifier=manifest["job_arn"])
        statuses[manifest["job_name"]] = str(reply["status"])
        message = f" ({reply['message']})" if reply.get("message") else ""
        print(f"{manifest['job_name']}: {reply['status']}{message}, {len(manifest['keys'])} records")
    return statuses


def collect_cmd(*, state_dir: Path = STATE_DIR, s3: Any = None, bedrock: Any = None) -> dict[str, int]:
    """Load the outputs of every finished job into the response cache; running jobs are left alone."""
    import boto3

    counts = {"jobs": 0, "records": 0, "ok": 0, "error": 0, "running": 0}
    for path, manifest in manifests(state_dir):
        if manifest.get("collected"):
            continue
        client = bedrock or _bedrock_for(manifest)
        status = str(client.get_model_invocation_job(jobIdentifier=manifest["job_arn"])["status"])
        if status not in DONE:
            counts["running"] += 1
            print(f"{manifest['job_name']}: {status}, not collected yet")
            continue
        job = BatchJob(
            manifest["job_arn"], manifest["job_name"], manifest["input_uri"], manifest["output_uri"],
            tuple(manifest["keys"]),
        )  # fmt: skip
        reader = s3 or boto3.client(
            "s3", region_name=manifest["region"], endpoint_url=manifest.get("s3_endpoint_url")
        )
        requests = {key: SimpleNamespace(model=manifest["model"]) for key in job.keys}
        with ResponseCache(manifest["cache"]) as cache:
            responses = collect(
                [job], requests, s3=reader, cache=cache, backend_name=manifest["backend"],  # type: ignore[arg-type]
                invocation_type=manifest["invocation_type"], statuses={job.job_arn: status},
            )  # fmt: skip
        counts["jobs"] += 1
        counts["records"] += len(responses)
        for response in responses.values():
            counts["ok" if response.status != "error" else "error"] += 1
        write_text(path, json.dumps({**manifest, "collected": True, "status": status}, indent=2) + "\n")
        print(f"{manifest['job_name']}: {status}; {len(responses)} records into {manifest['cache']}")
    return counts
