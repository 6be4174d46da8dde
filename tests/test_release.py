"""Release round trip against a real S3 API (moto's server on 127.0.0.1), with dvc-s3.

A minimal copy of the project's pipeline (the real dvc.yaml stages and params, with the constant-slot
heuristic as the model, 5 sampled items of the real customs bank, a slice of the default statutes and
tracking off) is run, released, cloned, pulled and re-checked: nothing re-runs, no model is called,
and ``analyze`` rewrites byte-identical tables.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from blindmcq.reporting.html import write_html_report
from blindmcq.reporting.release import ReleaseError, default_tag, locked_outputs, release, safe_url

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "fixtures" / "samples"  # real customs items, committed
BIN = Path(sys.executable).parent
CACHE = ".cache/blindmcq/responses.sqlite"


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run a command; fail the test with its output on a non-zero exit; return stdout + stderr."""
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}:\n{out}"
    return out


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DVC_", "GIT_"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",  # `python`/`dvc` in stage commands: this venv
        PYTHONPATH=str(REPO / "src"),
        HOME=str(home),  # no user-level git/dvc config leaks in
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        DVC_NO_ANALYTICS="1",
    )
    return env


def mini_bank(path: Path, per_act: int = 3) -> None:
    """The first ``per_act`` legislation items of each act, in the bank's own file shape."""
    raw = json.loads((DATA / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))
    raw["legislation"] = {act: items[:per_act] for act, items in raw["legislation"].items()}
    raw["operational_competencies"] = {}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")


def mini_params() -> dict:
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    conf = REPO / "conf"
    heuristic = yaml.safe_load((conf / "model" / "constant-a.yaml").read_text(encoding="utf-8"))
    params["dataset"] = {
        "name": "customs-mini",
        "loader": "customs",
        "path": "data/bank/questions.json",
        "parts": ["legislation"],
        "acts": None,
        "competencies": None,
        "levels": None,
        "dep": "data/bank",
    }
    params["statutes"] = {"name": "mini", "path": "data/statutes/provisions.jsonl"}
    params["model"] = params["gate_model"] = heuristic
    params["panel"] = {"name": "none", "models": []}  # the default panel would load Gemma
    params["probe"] = {**params["probe"], "sample": 5, "cache": CACHE}
    params["tracking"] = yaml.safe_load((conf / "tracking" / "off.yaml").read_text(encoding="utf-8"))
    return params


def mini_pipeline() -> dict:
    """The project's dvc.yaml without the code and config deps (the package is imported, not copied)."""
    pipeline = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    for stage in pipeline["stages"].values():
        code_or_config = ("src", "conf", "defaults/")
        stage["deps"] = [d for d in stage.get("deps", []) if not str(d).startswith(code_or_config)]
    return pipeline


def make_project(root: Path, env: dict[str, str]) -> None:
    root.mkdir()
    mini_bank(root / "data" / "bank" / "questions.json")
    statutes = (REPO / "defaults" / "statutes" / "provisions-default.jsonl").read_text(encoding="utf-8")
    (root / "data" / "statutes").mkdir(parents=True)
    (root / "data" / "statutes" / "provisions.jsonl").write_text(
        "".join(statutes.splitlines(keepends=True)[::5]), encoding="utf-8"
    )
    (root / "params.yaml").write_text(yaml.safe_dump(mini_params(), allow_unicode=True), encoding="utf-8")
    (root / "dvc.yaml").write_text(yaml.safe_dump(mini_pipeline(), sort_keys=False), encoding="utf-8")
    (root / ".gitignore").write_text(".cache/\nmlruns/\n", encoding="utf-8")
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["dvc", "init", "-q"],
        ["dvc", "repro", "-q"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "mini pipeline"],
    ):
        run(cmd, root, env)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """A moto S3 server on 127.0.0.1 with one bucket; yields its endpoint and (random) credentials."""
    boto3 = pytest.importorskip("boto3")
    server_mod = pytest.importorskip("moto.server")
    port = free_port()
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    creds = {
        "AWS_ACCESS_KEY_ID": "AKIA" + secrets.token_hex(8).upper(),
        "AWS_SECRET_ACCESS_KEY": secrets.token_urlsafe(30),
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )
    client.create_bucket(Bucket="blindmcq-test")
    try:
        yield {"endpoint": endpoint, **creds}
    finally:
        server.stop()


@pytest.mark.full  # a moto S3 server, the mini pipeline by `dvc repro`, push, clone, pull
def test_release_push_clone_pull_repro_is_up_to_date_and_tables_identical(tmp_path, s3):
    env = base_env(tmp_path)
    origin, clone = tmp_path / "origin", tmp_path / "clone"
    make_project(origin, env)
    secret_values = [s3["AWS_ACCESS_KEY_ID"], s3["AWS_SECRET_ACCESS_KEY"]]
    with_creds = {**env, **{k: v for k, v in s3.items() if k.startswith("AWS_")}}
    logs = []
    # The user's commands for a real bucket, with the local endpoint added; nothing secret is committed.
    logs.append(run(["dvc", "remote", "add", "-d", "store", "s3://blindmcq-test/blindmcq"], origin, env))
    logs.append(run(["dvc", "remote", "modify", "store", "endpointurl", s3["endpoint"]], origin, env))
    run(["git", "commit", "-q", "-m", "remote", "--", ".dvc/config"], origin, env)
    assert (origin / CACHE).exists()  # the probe did call the heuristic backend here

    out = run([sys.executable, "-m", "blindmcq.cli.release", "--tag", "v-test"], origin, with_creds)
    logs.append(out)
    assert "released" in out and "v-test" in out
    tag_message = run(["git", "tag", "-n99", "-l", "v-test"], origin, env)
    assert "results/predictions" in tag_message and "DVC remote: store" in tag_message
    # the read-only URL release wrote (path-style on the endpoint) serves the same objects, no credentials
    read_only = f"{s3['endpoint']}/blindmcq-test/blindmcq"
    assert read_only in (origin / ".dvc" / "config").read_text(encoding="utf-8")
    assert f"blindmcq pull {read_only}" in tag_message
    boto3 = pytest.importorskip("boto3")
    client = boto3.client(
        "s3",
        endpoint_url=s3["endpoint"],
        aws_access_key_id=s3["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=s3["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )
    public = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}
    policy = {
        "Version": "2012-10-17",
        "Statement": [{**public, "Resource": "arn:aws:s3:::blindmcq-test/blindmcq/*"}],
    }
    client.put_bucket_policy(Bucket="blindmcq-test", Policy=json.dumps(policy))  # the README's public-read
    anon = tmp_path / "anon"
    logs.append(run(["git", "clone", "-q", str(origin), str(anon)], tmp_path, env))
    logs.append(run(["dvc", "pull", "-q", "-r", "release"], anon, env))
    predictions = Path("results/predictions/predictions.parquet")
    assert (anon / predictions).read_bytes() == (origin / predictions).read_bytes()

    logs.append(run(["git", "clone", "-q", str(origin), str(clone)], tmp_path, env))
    logs.append(run(["dvc", "pull", "-q"], clone, with_creds))
    repro = run(["dvc", "repro"], clone, env)
    logs.append(repro)
    assert "Running stage" not in repro and "Data and pipelines are up to date" in repro, repro
    assert not (clone / ".cache").exists()  # no response cache: no model was asked anything

    analysis = Path("results/analysis")
    originals = {p.relative_to(clone): p.read_bytes() for p in (clone / analysis).rglob("*") if p.is_file()}
    shutil.rmtree(clone / analysis)
    logs.append(run(["dvc", "repro", "-f", "-s", "analyze"], clone, env))
    tables = sorted(p for p in originals if p.parts[2] == "tables")
    assert tables, "the analysis wrote no tables"
    for rel in [*tables, analysis / "metrics.json"]:
        assert (clone / rel).read_bytes() == originals[rel], f"{rel} differs after re-running analyze"
    assert not (clone / ".cache").exists()

    # The pulled outputs are all the HTML report needs.
    index = write_html_report(
        tmp_path / "html",
        items_path=clone / "results/corpus/items.jsonl",
        predictions_path=clone / "results/predictions/predictions.parquet",
        gate_path=clone / "results/gate/gate.json",
        baselines_dir=clone / "results/baselines",
        analysis_dir=clone / analysis,
    )
    page = index.read_text(encoding="utf-8")
    assert "Table 2" in page and "dmsu-" in page and (index.parent / "figures").is_dir()

    for secret in secret_values:
        assert all(secret not in text for text in logs)
        for repo in (origin, clone):
            for path in repo.rglob("*"):
                if path.is_file() and ".dvc/cache" not in str(path) and path.stat().st_size < 5_000_000:
                    assert secret.encode() not in path.read_bytes(), f"credential written to {path}"


def git_project(root: Path, env: dict[str, str]) -> None:
    """A tiny DVC project whose one stage copies a file: enough to test the refusals."""
    root.mkdir()
    (root / "in.txt").write_text("a\n", encoding="utf-8")
    pipeline = {"stages": {"copy": {"cmd": "cp in.txt out.txt", "deps": ["in.txt"], "outs": ["out.txt"]}}}
    (root / "dvc.yaml").write_text(yaml.safe_dump(pipeline), encoding="utf-8")
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["dvc", "init", "-q"],
        ["dvc", "repro", "-q"],
        ["dvc", "remote", "add", "-d", "store", "../remote"],  # beside the project, relative: survives a copy
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "tiny"],
    ):
        run(cmd, root, env)


@pytest.fixture(scope="module")
def tiny_template(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("template")
    git_project(base / "tiny", base_env(base))
    return base / "tiny"


@pytest.fixture
def tiny(tiny_template, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the tiny project (its remote is the folder beside it), git identity from env."""
    env = base_env(tmp_path)
    for key in ("HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, env[key])
    root = tmp_path / "tiny"
    shutil.copytree(tiny_template, root, symlinks=True)
    return root


def test_release_tags_after_push_to_a_local_remote(tiny):
    done = release(tiny)
    assert done.tag == default_tag(done.commit)
    assert done.outputs == locked_outputs(tiny) and "out.txt" in done.outputs
    assert done.pushed >= 1
    assert any((tiny.parent / "remote").rglob("*"))
    tagged = subprocess.run(
        ["git", "-C", str(tiny), "rev-list", "-n1", done.tag], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert tagged == done.commit
    with pytest.raises(ReleaseError, match="already exists"):
        release(tiny, tag=done.tag)


def test_release_refuses_uncommitted_lock(tiny):
    (tiny / "dvc.lock").write_text((tiny / "dvc.lock").read_text() + "\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"uncommitted changes to dvc\.lock;"):
        release(tiny)
    assert not subprocess.run(["git", "-C", str(tiny), "tag"], capture_output=True, text=True).stdout


def test_release_refuses_stale_outputs(tiny):
    (tiny / "out.txt").write_text("edited by hand\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"not up to date \(copy\)"):
        release(tiny)


def test_release_refuses_credentials_in_committed_config(tiny):
    env = base_env(tiny.parent)
    run(["dvc", "remote", "add", "bucket", "s3://bucket/blindmcq"], tiny, env)
    run(["dvc", "remote", "modify", "bucket", "secret_access_key", "abc"], tiny, env)
    run(["git", "commit", "-q", "-m", "oops", "--", ".dvc/config"], tiny, env)
    with pytest.raises(ReleaseError, match="remote 'bucket' has secret_access_key") as err:
        release(tiny)
    assert "abc" not in str(err.value)


def test_release_refuses_unknown_remote(tiny):
    with pytest.raises(ReleaseError, match="unknown DVC remote 'nope'"):
        release(tiny, remote="nope")


def test_safe_url_drops_user_info():
    assert safe_url("https://user:pw@host.example:8443/p") == "https://host.example:8443/p"
    assert safe_url("s3://bucket/blindmcq") == "s3://bucket/blindmcq"


def test_cli_reports_refusal_with_exit_2(tiny, capsys):
    from blindmcq.cli.release import main

    (tiny / "out.txt").write_text("edited\n", encoding="utf-8")
    assert main(["-C", str(tiny)]) == 2
    assert "blindmcq release: error: outputs are not up to date" in capsys.readouterr().err
