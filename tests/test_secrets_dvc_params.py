"""``dvc exp run -S 'prompt.system=${oc.env:SOME_TOKEN}'`` must not write the token into
params.yaml (DVC resolves before it writes, and the queue stashes params.yaml in git). The safe route,
``${secret:SOME_TOKEN}``, leaves a reference that a stage reads from the environment when it runs.

DVC's own composition (``dvc.utils.hydra.compose_and_dump``, what ``dvc exp run -S`` and ``--queue``
call, with the repository root as its Hydra plugins path) runs in a fresh process, as DVC does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blindmcq.errors import ConfigError
from blindmcq.params import load_params
from blindmcq.secrets import resolve_secret_refs, scrub_text

REPO = Path(__file__).resolve().parents[1]
TOKEN = "ghp_not_real_0123456789abcdefABCDEF"


def _dvc_compose(out: Path, override: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from dvc.utils.hydra import compose_and_dump; "
        "compose_and_dump(sys.argv[1], sys.argv[2], None, 'config', sys.argv[3], [sys.argv[4]])"
    )
    env = {**os.environ, "SOME_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", code, str(out), str(REPO / "conf"), str(REPO), override],
        capture_output=True, text=True, env=env, timeout=300, cwd=out.parent,
    )  # fmt: skip


def test_the_unsafe_route_fails_before_params_yaml_is_written(tmp_path: Path) -> None:
    out = tmp_path / "params.yaml"
    done = _dvc_compose(out, "prompt.system=${oc.env:SOME_TOKEN}")
    assert done.returncode == 2
    assert not out.exists()  # nothing written, so nothing stashed in git either
    assert "prompt.system" in done.stderr and "${secret:SOME_TOKEN}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("blindmcq: error: ")
    assert TOKEN not in done.stderr + done.stdout


def test_the_safe_route_keeps_a_reference_resolved_when_the_stage_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "params.yaml"
    done = _dvc_compose(out, "prompt.system=${secret:SOME_TOKEN}")
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    assert TOKEN not in text and "secret-env://SOME_TOKEN" in text
    assert yaml.safe_load(text)["prompt"]["system"] == "secret-env://SOME_TOKEN"
    monkeypatch.setenv("SOME_TOKEN", TOKEN)
    config = load_params(out)  # what every stage calls
    assert config.prompt is not None and config.prompt.system == TOKEN
    assert scrub_text(f"system: {TOKEN}") == "system: ***"  # and it is a secret from now on
    monkeypatch.delenv("SOME_TOKEN")
    with pytest.raises(ConfigError, match=r"prompt\.system.*SOME_TOKEN is not set"):
        load_params(out)


def test_an_allowed_variable_still_resolves_under_dvc(tmp_path: Path) -> None:
    out = tmp_path / "params.yaml"
    done = _dvc_compose(out, "+dataset.note=${oc.env:HOME}")
    assert done.returncode == 0, done.stderr[-2000:]


def test_references_are_resolved_inside_text() -> None:
    cfg = {"prompt": {"system": "key secret-env://A_VAR here", "n": 3}, "xs": ["secret-env://A_VAR"]}
    resolved = resolve_secret_refs(cfg, {"A_VAR": "value-123456"})
    assert resolved == {"prompt": {"system": "key value-123456 here", "n": 3}, "xs": ["value-123456"]}
