"""Secrets: one scrubber (blindmcq.secrets) for MLflow params, tags and artifacts,
Hydra's output files, logs and reports. The sweep end to end is tests/test_sweep.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindmcq.reporting.tracking import flatten, log_run
from blindmcq.secrets import is_secret_key, scrub, scrub_text, scrub_tree

TOKEN = "tok-1234567890-not-real"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize(
    ("name", "secret"),
    [("api_key", True), ("aws_secret_access_key", True), ("session_token", True), ("password", True),
     ("MY_API_TOKEN", True), ("secret", True), ("private_key", True), ("client-secret", True),
     ("key", False), ("key_slot", False), ("model_id", False), ("k", False), ("max_tokens", False),
     ("api_key_env", False), ("key_format", False), ("thinking_budget_tokens", False), ("keys", False)],
)  # fmt: skip
def test_secrets_key_names_are_matched_as_words(name: str, secret: bool) -> None:
    assert is_secret_key(name) is secret


def test_secrets_scrub_text_by_name_env_value_and_aws_shape() -> None:
    env = {"MY_API_TOKEN": TOKEN, "HOME": "/home/someone", "PATH": "/usr/bin"}
    text = (f"note: {TOKEN}\nid {AWS_ID}\n  aws_secret_access_key: abc/def\n- +model.api_key=sk-xyz\n"
            "key: answer\nhome: /home/someone\n")  # fmt: skip
    clean = scrub_text(text, env)
    for leaked in (TOKEN, AWS_ID, "abc/def", "sk-xyz"):
        assert leaked not in clean
    assert "key: answer" in clean and "/home/someone" in clean  # not secrets: kept


class _Vanishing(dict):
    """An environment from which another thread unsets a variable while it is being read (MLflow's
    telemetry does this to ``_MLFLOW_TELEMETRY_SESSION_ID``)."""

    def __getitem__(self, key: str) -> str:
        if key == "GONE_TOKEN":
            raise KeyError(key)
        return super().__getitem__(key)

    def get(self, key: str, default: str | None = None) -> str | None:
        try:
            return self[key]
        except KeyError:
            return default

    def items(self):  # type: ignore[override]
        return ((k, self[k]) for k in list(self))


def test_secrets_scrub_text_survives_a_variable_unset_while_reading() -> None:
    env = _Vanishing(GONE_TOKEN="x" * 20, MY_API_TOKEN=TOKEN)
    assert scrub_text(f"note {TOKEN}", env) == "note ***"


def test_secrets_scrub_mapping_drops_secret_keys() -> None:
    cfg = {"model": {"name": "m", "api_key": "sk-1", "key_slot": 2}, "prompt": {"system": f"x {AWS_ID}"}}
    assert scrub(cfg, {}) == {"model": {"name": "m", "key_slot": 2}, "prompt": {"system": "x ***"}}


def test_secrets_never_reach_mlflow_params_tags_or_artifacts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_TOKEN", TOKEN)
    artifacts = tmp_path / "report"
    (artifacts / ".hydra").mkdir(parents=True)
    overrides = f"- +model.aws_secret_access_key=wJalr/XUtn\n- x={TOKEN}\n"
    (artifacts / ".hydra/overrides.yaml").write_text(overrides)
    (artifacts / "report.md").write_text(f"# run\n\nkey id {AWS_ID}\n")
    config = {
        "model": {"name": "longest", "aws_secret_access_key": "wJalr/XUtn", "key_slot": 1},
        "prompt": {"system": TOKEN, "name": "original"},
        "tracking": {"enabled": True},
    }
    assert flatten(config) == {"model.name": "longest", "model.key_slot": "1", "prompt.name": "original",
                               "tracking.enabled": "True"}  # fmt: skip
    tracking = {"enabled": True, "uri": f"sqlite:///{tmp_path}/mlruns/mlflow.db",
                "artifact_location": str(tmp_path / "mlruns/artifacts"), "experiment": "t"}  # fmt: skip
    run_id = log_run(tracking, run_name="r", config=config, metrics={"m": 1.0}, artifacts_dir=artifacts,
                     tags={"stage": "test", "session_token": TOKEN, "note": AWS_ID})  # fmt: skip
    assert run_id
    import mlflow

    run = mlflow.get_run(run_id)
    assert "model.aws_secret_access_key" not in run.data.params and "prompt.system" not in run.data.params
    assert "session_token" not in run.data.tags and run.data.tags["note"] == "***"
    for path in (tmp_path / "mlruns").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(s.encode() in data for s in (TOKEN, AWS_ID, "wJalr/XUtn")), path
    assert scrub_tree(artifacts) == []  # already clean: the artifacts were scrubbed before logging
