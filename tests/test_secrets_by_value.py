"""Every value resolved from the environment is scrubbed by value (whatever
the variable's name, except the documented allow list), and error text is scrubbed before it is stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.engine import run_requests
from blindmcq.engine.cache import ResponseCache
from blindmcq.secrets import ENV_ALLOW, install_env_resolver, scrub_text

REPO = Path(__file__).resolve().parents[1]
PAT = "pat_9f8e7d6c5b4a39281706"  # a personal access token in a variable whose name looks harmless


def test_a_value_resolved_with_oc_env_is_a_secret_whatever_the_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PAT", PAT)
    monkeypatch.setenv("AWS_REGION", "eu-north-1")
    assert scrub_text(f"name {PAT}") == f"name {PAT}"  # not known before it is resolved
    install_env_resolver()
    cfg = OmegaConf.create({"prompt": {"name": "${oc.env:MY_PAT}"}, "region": "${oc.env:AWS_REGION}",
                            "fallback": "${oc.env:UNSET_VAR_27,plain}"})  # fmt: skip
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert resolved == {"prompt": {"name": PAT}, "region": "eu-north-1", "fallback": "plain"}
    assert scrub_text(f"table6: {PAT}") == "table6: ***"
    assert "AWS_REGION" in ENV_ALLOW and scrub_text("eu-north-1") == "eu-north-1"  # the allow list


def test_the_allow_list_is_documented() -> None:
    text = (REPO / "docs/config.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in text for name in ENV_ALLOW)


class Echo401:
    """A provider whose 401 body echoes the key it was sent."""

    name = "echo401"
    concurrency = 1

    def __init__(self, key: str) -> None:
        self.key = key

    def wire_request(self, request: ModelRequest) -> dict[str, str]:
        return {"user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        message = f"HTTP401: bad key Bearer {self.key}"
        return ModelResponse(text="", status="error", error=message, meta={"provider_message": message})


@pytest.mark.parametrize("key", ["sk-proj-Abc123Def456Ghi789Jkl0", "0123456789abcdefXYZ"])
def test_error_text_is_scrubbed_before_it_is_stored(tmp_path: Path, key: str) -> None:
    out = run_requests(
        [ModelRequest(model="m", system=None, user="q")], Echo401(key),
        cache=ResponseCache(tmp_path / "c.sqlite", cache_errors=True), progress=False,
    )  # fmt: skip
    response = out[0].response
    assert response.error is not None and key not in response.error and "HTTP401" in response.error
    assert key not in response.meta["provider_message"]
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert key.encode() not in raw


def test_a_raised_error_echoing_an_api_key_env_value_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindmcq.backends.openai_api import OpenAIBackend
    from blindmcq.config.schema import model_config

    monkeypatch.setenv("PLAIN_NAME", "zz-key-0011223344556677")  # neither a secret name nor a key shape
    backend = OpenAIBackend(model_config({"name": "x", "backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                                          "model_id": "m", "auth": "api_key",
                                          "api_key_env": "PLAIN_NAME"}))  # fmt: skip
    backend._api_key_and_auth()  # the backend reads its key: from now on the value is a secret

    class Raises:
        name = "raises"

        def complete(self, request: ModelRequest) -> ModelResponse:
            raise RuntimeError("401 for key zz-key-0011223344556677")

    out = run_requests([ModelRequest(model="m", system=None, user="q")], Raises(), cache=":memory:",
                       progress=False)  # fmt: skip
    assert out[0].response.error == "RuntimeError: 401 for key ***"


def _files_with(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.mark.full  # a Hydra sweep in a subprocess
def test_a_sweep_with_an_env_value_in_a_plain_key_leaks_it_nowhere(tmp_path: Path) -> None:
    env = {**os.environ, "BLINDMCQ_CONF": str(REPO / "conf"), "MY_PAT": PAT,
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    command = [
        sys.executable, "-m", "blindmcq.sweep", "dataset=nonsenseqa", "dataset.n_test=6",
        "dataset.n_fewshot=0", "model=longest", "model@gate_model=longest", "probe.sample=4",
        "condition=blind", f"probe.cache={tmp_path}/cache.sqlite", "prompt.name=${oc.env:MY_PAT}",
        f"tracking.uri=sqlite:///{tmp_path}/mlruns/mlflow.db",
        f"tracking.artifact_location={tmp_path}/mlruns/artifacts", f"hydra.run.dir={tmp_path}/run",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "run/tables").is_dir()
    assert not _files_with(tmp_path / "run", PAT)
    assert not _files_with(tmp_path / "mlruns", PAT)
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlruns/mlflow.db")
    (run,) = mlflow.search_runs(experiment_names=["blindmcq"], output_format="list")
    assert PAT not in str(run.data.params) + str(run.data.tags)


def test_html_data_attributes_are_not_credentials() -> None:
    """The explorer's sortable columns are ``data-key="id"``: scrubbing them broke sorting in every
    report the report stage logged (the attribute is a page field, not a key=value credential)."""
    from blindmcq.secrets import is_secret_key, scrub_text

    html = '<th data-key="id">id</th><th data-key="key_slot">key</th>'
    assert scrub_text(html, environ={}) == html
    assert not is_secret_key("data-key")
    assert scrub_text('api_key="abcdef123456"', environ={}) == "api_key=***"
    assert is_secret_key("api-key") and is_secret_key("aws_secret_access_key")


def test_the_committed_report_was_not_scrubbed_into_nonsense() -> None:
    """The default run's HTML report holds no credential, so nothing in it may read ``***``."""
    from pathlib import Path

    import pytest

    page = Path(__file__).resolve().parents[1] / "reports" / "html" / "index.html"
    if not page.is_file():
        pytest.skip("no report yet: `make run` writes reports/html/index.html")
    assert "***" not in page.read_text(encoding="utf-8")


def test_report_data_is_scrubbed_by_value_only(tmp_path, monkeypatch) -> None:
    """A model named ``...-cloze-token`` is data in the report's page, not a ``token: value`` pair: the
    page keeps its JSON intact, and a credential in it is still caught by value."""
    from blindmcq.secrets import scrub_tree

    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdef")
    page = tmp_path / "index.html"
    data = '{"leakRuns":{"gemma3-270m":"position habit","gemma3-270m-cloze-token":{"o":"rot0"}}}'
    page.write_text(f"<script>{data}</script><p>sk-live-0123456789abcdef</p>", encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text("hf_token: plain-text-credential\n", encoding="utf-8")
    scrub_tree(tmp_path)
    assert page.read_text(encoding="utf-8") == f"<script>{data}</script><p>***</p>"
    assert config.read_text(encoding="utf-8") == "hf_token: ***\n"
