"""``blindmcq preview``: the exact wire request and cache key of each probe call, and no call made."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from blindmcq import cli
from blindmcq.backends.base import request_key
from blindmcq.backends.bedrock import BedrockBackend
from blindmcq.backends.registry import make_backend
from blindmcq.cli.preview import compose_params
from blindmcq.config.files import load_label_schemes
from blindmcq.config.schema import model_config, validate, validate_group
from blindmcq.datasets.items import Item, write_items
from blindmcq.params import section
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, build_jobs, run_probe, sample_items

CONF = Path(__file__).resolve().parents[1] / "conf"


def _items() -> list[Item]:
    # made-up items in the bank's shape (no real text needed)
    return [
        Item(
            id=f"demo-{i}",
            source="demo",
            bank="demo",
            number=i,
            question=f"Питання {i}?",
            options=(f"перший {i}", f"другий варіант {i}", f"третій {i}", f"четвертий довгий варіант {i}"),
            key=i % 4,
        )
        for i in range(1, 6)
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a corpus, as after the corpus stage (made-up items, and the fingerprint
    of the default dataset config the stage would have written beside them)."""
    from blindmcq.datasets.fingerprint import write_fingerprint
    from blindmcq.datasets.registry import bank_digests

    write_items(tmp_path / "results" / "corpus" / "items.jsonl", _items())
    (tmp_path / "defaults").symlink_to(CONF.parent / "defaults")  # the bank files the corpus was built from
    monkeypatch.chdir(tmp_path)
    params = compose_params([], CONF)
    digests = bank_digests(validate_group("dataset", params["dataset"]))
    write_fingerprint(tmp_path / "results" / "corpus", params["dataset"], int(params.get("seed", 0)), digests)
    return tmp_path


def _preview(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    assert cli.main(["preview", *args, "--conf", str(CONF)]) == 0
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines()]


def _jobs(overrides: list[str], n: int) -> tuple[dict[str, Any], list[Any]]:
    params = compose_params([*overrides, "probe.sample=null"], CONF)
    probe = section(params, "probe")
    items = sample_items(_items(), probe.get("sample"), int(probe.get("seed", 0)))[:n]
    _, jobs = build_jobs(
        items, model_cfg=model_config(section(params, "model")),
        setup=PresentationSetup.from_params(validate(params, file=None), load_label_schemes(CONF)),
    )  # fmt: skip
    return params, jobs


def test_preview_longest_keys_are_the_keys_the_probe_caches_under(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _preview(capsys, "model=longest", "probe.sample=null", "--items", "2")
    params, jobs = _jobs(["model=longest"], 2)
    assert len(lines) == len(jobs) > 2
    assert len({line["item_id"] for line in lines}) == 2
    backend = make_backend(model_config(section(params, "model")))
    for line, (presentation, request) in zip(lines, jobs, strict=True):
        assert line["item_id"] == presentation.item_id and line["order_id"] == presentation.order_id
        assert line["key"] == request_key(backend, request)
        assert line["wire"] == backend.wire_request(request)
        assert line["backend"] == backend.name == "heuristic:longest"
        assert line["wire"]["option_texts"] == list(presentation.option_texts)
    # the real probe, run on those items, caches under exactly the printed keys
    items = [i for i in _items() if i.id in {line["item_id"] for line in lines}]
    frame = run_probe(
        items, model_cfg=model_config(section(params, "model")),
        setup=PresentationSetup.from_params(validate(params, file=None), load_label_schemes(CONF)),
        engine=EngineSettings(project / "cache.sqlite", progress=False),
    )  # fmt: skip
    assert list(frame["request_hash"]) == [line["key"] for line in lines]


def test_preview_sonnet_prints_the_converse_request_and_calls_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("preview made (or prepared) a call")

    monkeypatch.setattr(BedrockBackend, "complete", forbidden)
    monkeypatch.setattr(BedrockBackend, "client", forbidden)
    monkeypatch.setattr(boto3, "client", forbidden)
    monkeypatch.setattr(boto3.session, "Session", forbidden)
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)  # no credentials needed

    lines = _preview(capsys, "model=sonnet-4.6", "probe.sample=null", "--items", "2")
    params, jobs = _jobs(["model=sonnet-4.6"], 2)
    backend = BedrockBackend(model_config(section(params, "model")), client_factory=forbidden)
    assert len(lines) == len(jobs)
    for line, (presentation, request) in zip(lines, jobs, strict=True):
        assert line["key"] == request_key(backend, request)
        wire = line["wire"]
        assert wire == backend.wire_request(request)
        assert wire["modelId"] == "eu.anthropic.claude-sonnet-4-6" and line["endpoint"] is None
        assert wire["messages"][0]["content"][0]["text"] == presentation.user
        assert wire["inferenceConfig"]["maxTokens"] == request.max_tokens
    # another model switch on the wire, another key: thinking adds the budget and its fields
    thinking = _preview(capsys, "model=sonnet-4.6", "reasoning=thinking", "probe.sample=null", "--items", "1")
    assert "additionalModelRequestFields" in thinking[0]["wire"]
    assert thinking[0]["key"] not in {line["key"] for line in lines}


def test_preview_bad_input_is_one_line_and_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["preview", "model=no-such-model", "--conf", str(CONF)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no-such-model" in err
    assert cli.main(["preview", "--items", "0", "--conf", str(CONF)]) == 2
    assert "--items" in capsys.readouterr().err
    assert cli.main(["preview", "--conf", str(project)]) == 2  # no config.yaml there
    assert "config.yaml" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("seed=foo", "seed"),
        ("model.concurrency=abc", "model.concurrency"),
        ("probe.sample=-3", "probe.sample"),
        ("model.max_tokens=-1", "model.max_tokens"),
    ],
)
def test_preview_checks_the_composed_config_like_every_entry_point(
    project: Path, capsys: pytest.CaptureFixture[str], override: str, key: str
) -> None:
    """The schema check of params.load_params and the sweep, not a traceback or a
    silently accepted value."""
    assert cli.main(["preview", "model=longest", override, "--conf", str(CONF)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and key in err and "Traceback" not in err


def test_preview_prints_cyrillic_as_is_and_a_summary_of_its_calls(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli.main(["preview", "model=longest", "probe.sample=null", "--items", "2", "--conf", str(CONF)]) == 0
    )
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert not re.search(r"\\u0[0-9a-f]{3}", captured.out) and "варіант" in captured.out  # no \\uXXXX
    blind = sum(line["condition"] == "blind" for line in lines)
    keys = len({line["key"] for line in lines})
    summary = captured.err.strip().splitlines()[-1]
    assert summary.startswith(f"blindmcq preview: {len(lines)} calls for 2 items ({blind} blind")
    assert f"{keys} distinct requests" in summary and "no call was made" in summary
