"""Reproduction you can see: a rerun from the response cache writes every output with the same hash.

The real dvc.yaml and configs, run by ``dvc repro`` in a scratch project (a copy of src/, conf/,
defaults/), with heuristic models so it is cheap and a real-text sample (tests/fixtures/samples) as the
bank. Then every stage is forced to run again (``dvc repro -f``): the model answers now come from the
response cache, the call logs record it, and dvc.lock must not change by a byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "tests" / "fixtures" / "samples"
BIN = Path(sys.executable).parent
OVERRIDES = [
    "dataset=customs-legislation",  # data/ua-customs-exam/questions.json: here, the committed sample
    "model=longest",
    "model@gate_model=longest",
    "panel=none",  # the default panel would load Gemma
    "probe.sample=12",
    "probe.cache=.cache/blindmcq/responses.sqlite",
    "tracking=off",
    "intervention.answerpool.sample=10",
]


def dvc(work: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "GIT_"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(work / "src"),  # the stages import the scratch copy, the one DVC hashes
        HOME=str(work.parent / "home"),
        DVC_NO_ANALYTICS="1",
        OMP_WAIT_POLICY="PASSIVE",
    )
    done = subprocess.run(["dvc", *args], cwd=work, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"dvc {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def outputs(lock: dict) -> dict[str, str]:
    """path -> md5 of every output and metric in a dvc.lock."""
    return {o["path"]: o["md5"] for stage in lock["stages"].values() for o in stage.get("outs", [])}


@pytest.mark.full  # a small whole pipeline by `dvc repro`, twice: about a minute on two cores
def test_a_rerun_from_the_cache_leaves_dvc_lock_unchanged(tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (tmp_path / "home").mkdir()
    for sub in ("src", "conf", "defaults"):
        shutil.copytree(REPO / sub, work / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copyfile(REPO / name, work / name)
    (work / "data" / "ua-customs-exam").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "ua-customs-exam/questions.json", work / "data/ua-customs-exam/questions.json")
    with initialize_config_dir(config_dir=str(work / "conf"), version_base=None):
        params = OmegaConf.to_container(compose(config_name="config", overrides=OVERRIDES), resolve=True)
    (work / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    dvc(work, "init", "--no-scm", "-q")
    dvc(work, "config", "hydra.enabled", "false")  # params.yaml as composed above, not recomposed

    dvc(work, "repro")
    first = (work / "dvc.lock").read_text(encoding="utf-8")
    assert "results/predictions" in first
    dvc(work, "repro", "-f")
    second = (work / "dvc.lock").read_text(encoding="utf-8")
    changed = {
        path: md5
        for path, md5 in outputs(yaml.safe_load(second)).items()
        if outputs(yaml.safe_load(first)).get(path) != md5
    }
    assert not changed, f"a rerun from the cache changed these outputs: {sorted(changed)}"
    assert second == first
    # the rerun was served from the cache, and that fact lives in the call log, outside the hashes
    calls = yaml.safe_load((work / "results/calls/predictions/calls.json").read_text(encoding="utf-8"))
    assert calls["new_calls"] == 0 and calls["from_cache"] == calls["calls"] > 0
    assert "up to date" in dvc(work, "status").lower()
