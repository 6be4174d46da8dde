"""A release pulled as a newcomer would: through DVC's http remote from a local HTTP server.

The minimal copy of the project's pipeline (test_release.make_project: the real dvc.yaml stages, the
constant-slot heuristic as the model) is released with ``blindmcq release`` to a remote folder; the folder
is served read-only by ``http.server`` in a thread, and ``blindmcq release --public-url`` wrote that URL to
``.dvc/config`` as the remote ``release``. A clone far from the folder pulls with the README's command
(``dvc pull -r release``), and ``dvc repro`` runs nothing, asks no model and leaves
``reports/metrics.json`` byte for byte. An object whose bytes were changed on the server is refused, and
``blindmcq pull`` names the output it belongs to.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from blindmcq.reporting.pull import object_path
from blindmcq.reporting.release import locked_outputs, public_url
from test_release import CACHE, base_env, git_project, make_project, run  # same folder (rootdir import mode)


class Served:
    """A read-only HTTP server over one folder, in a thread; counts the requests it answered."""

    def __init__(self, folder: Path) -> None:
        self.requests: list[tuple[str, str]] = []
        log = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet; keep what was asked
                log.append((self.command, self.path))

        handler = functools.partial(Handler, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def tiny_released(tmp_path_factory) -> Iterator[dict]:
    """test_release's one-stage project (``cp in.txt out.txt``), released with ``--public-url`` to its
    remote folder, which a local server serves: the release-and-pull mechanics in seconds."""
    base = tmp_path_factory.mktemp("tiny-http-release")
    env = base_env(base)
    origin, store = base / "tiny", base / "remote"  # git_project's default remote: the folder beside it
    git_project(origin, env)
    store.mkdir()
    served = Served(store)
    try:
        out = run([sys.executable, "-m", "blindmcq.cli", "release", "--public-url", served.url], origin, env)
        yield {"base": base, "env": env, "origin": origin, "store": store, "served": served, "out": out}
    finally:
        served.close()


def test_a_tiny_release_writes_its_url_and_a_fresh_clone_pulls_it_over_http(tiny_released, tmp_path):
    env, origin, served = tiny_released["env"], tiny_released["origin"], tiny_released["served"]
    assert f"blindmcq pull {served.url}" in tiny_released["out"]
    config = (origin / ".dvc" / "config").read_text(encoding="utf-8")
    assert served.url in config and "verify = True" in config
    assert run(["git", "status", "--porcelain"], origin, env).strip() == ""  # the URL was committed
    assert f"blindmcq pull {served.url}" in run(["git", "tag", "-n99"], origin, env)

    clone = tmp_path / "far" / "clone"  # nothing beside it: the remote folder is reachable only by HTTP
    run(["git", "clone", "-q", str(origin), str(clone)], tmp_path, env)
    before = len(served.requests)
    assert "fetched" in run(["dvc", "pull", "-r", "release"], clone, env)
    asked = served.requests[before:]
    assert asked and all(method in ("GET", "HEAD") for method, _ in asked), asked
    assert (clone / "out.txt").read_bytes() == (origin / "out.txt").read_bytes()
    assert "Data and pipelines are up to date" in run(["dvc", "status"], clone, env)


def test_a_tiny_release_with_a_changed_object_is_refused_and_named(tiny_released, tmp_path):
    env, origin = tiny_released["env"], tiny_released["origin"]
    tampered = tmp_path / "tampered"
    shutil.copytree(tiny_released["store"], tampered)
    md5 = locked_outputs(origin)["out.txt"]
    target = tampered / object_path(md5)
    target.write_bytes(target.read_bytes()[::-1] + b"!")
    served = Served(tampered)
    try:
        clone = tmp_path / "clone"
        run(["git", "clone", "-q", str(origin), str(clone)], tmp_path, env)
        done = subprocess.run(
            [sys.executable, "-m", "blindmcq.cli", "pull", served.url],
            cwd=clone, env=env, capture_output=True, text=True,
        )  # fmt: skip
    finally:
        served.close()
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1, done.stdout + err
    assert "out.txt" in err and "changed after the release" in err and object_path(md5) in err, err
    assert not (clone / "out.txt").exists()


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Iterator[dict]:
    """The mini project, released to ``store/`` (a DVC remote folder) that a local server serves."""
    base = tmp_path_factory.mktemp("http-release")
    env = base_env(base)
    origin, store = base / "origin", base / "store"
    make_project(origin, env)
    store.mkdir()
    served = Served(store)
    try:
        run(["dvc", "remote", "add", "store", "../store"], origin, env)  # the folder beside it
        run(["git", "commit", "-q", "-m", "store", "--", ".dvc/config"], origin, env)
        out = run(
            [
                sys.executable,
                "-m",
                "blindmcq.cli",
                "release",
                "--remote",
                "store",
                "--public-url",
                served.url,
            ],
            origin,
            env,
        )
        yield {"base": base, "env": env, "origin": origin, "store": store, "served": served, "out": out}
    finally:
        served.close()


@pytest.mark.full  # the mini pipeline's `dvc repro` (the tiny release above checks the same in seconds)
def test_release_writes_the_read_only_url_as_remote_release(released):
    origin, served = released["origin"], released["served"]
    assert f"blindmcq pull {served.url}" in released["out"]
    config = (origin / ".dvc" / "config").read_text(encoding="utf-8")
    assert '["remote" "release"]' in config.replace("'", '"') or 'remote "release"' in config
    assert served.url in config and "verify = True" in config
    status = subprocess.run(
        ["git", "-C", str(origin), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.stdout.strip() == ""  # the URL was committed, and the tag sits on that commit
    tag = run(["git", "tag", "-n99"], origin, released["env"])
    assert f"blindmcq pull {served.url}" in tag


@pytest.mark.full
def test_fresh_clone_pulls_over_http_and_repro_calls_no_model(released, tmp_path):
    env, origin, served = released["env"], released["origin"], released["served"]
    clone = tmp_path / "far" / "away" / "clone"  # nothing beside it: the store is reachable only by HTTP
    run(["git", "clone", "-q", str(origin), str(clone)], tmp_path, env)
    before = len(served.requests)
    pulled = run(["dvc", "pull", "-r", "release"], clone, env)
    asked = served.requests[before:]
    assert asked and all(method in ("GET", "HEAD") for method, _ in asked), asked
    assert any(path.endswith(".dir") for _, path in asked)  # the objects came from the server
    assert "fetched" in pulled

    status = run(["dvc", "status"], clone, env)
    assert "Data and pipelines are up to date" in status, status
    repro = run(["dvc", "repro"], clone, env)
    assert "Running stage" not in repro and "Data and pipelines are up to date" in repro, repro
    assert not (clone / CACHE).exists() and not (clone / ".cache").exists()  # no model was asked
    assert (clone / "reports/metrics.json").read_bytes() == (origin / "reports/metrics.json").read_bytes()
    for path in locked_outputs(clone):
        assert (clone / path).exists(), f"{path} was not pulled"


@pytest.mark.full
def test_a_changed_object_on_the_server_is_refused_and_named(released, tmp_path):
    env, origin = released["env"], released["origin"]
    tampered = tmp_path / "tampered"
    shutil.copytree(released["store"], tampered)
    # the object of results/predictions/predictions.parquet, from the directory listing in the remote
    listing = json.loads((tampered / object_path(locked_outputs(origin)["results/predictions"])).read_text())
    md5 = next(e["md5"] for e in listing if e["relpath"] == "predictions.parquet")
    target = tampered / object_path(md5)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte changed, size unchanged
    target.write_bytes(bytes(data))

    served = Served(tampered)
    try:
        clone = tmp_path / "clone"
        run(["git", "clone", "-q", str(origin), str(clone)], tmp_path, env)
        done = subprocess.run(
            [sys.executable, "-m", "blindmcq.cli", "pull", served.url],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        err = done.stderr.strip()
        assert len(err.splitlines()) == 1, err
        assert "results/predictions/predictions.parquet" in err and "changed after the release" in err, err
        assert object_path(md5) in err
        assert not (clone / "results/predictions/predictions.parquet").exists()  # refused, not checked out
        assert (clone / "results/corpus/items.jsonl").exists()  # the intact outputs did arrive
        # the committed remote has verify on: plain DVC against the changed server fails too
        again = subprocess.run(
            ["dvc", "pull", "-r", "release"], cwd=clone, env=env, capture_output=True, text=True
        )
        assert again.returncode != 0 and "results/predictions" in again.stdout + again.stderr
        status = subprocess.run(
            ["git", "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True
        )
        assert status.stdout.strip() == ""  # the URL went to the git-ignored .dvc/config.local
    finally:
        served.close()


def test_public_url_of_a_remote():
    assert public_url({"url": "s3://bucket/blindmcq"}) == "https://bucket.s3.amazonaws.com/blindmcq"
    assert (
        public_url({"url": "s3://bucket/a/b", "region": "eu-central-1"})
        == "https://bucket.s3.eu-central-1.amazonaws.com/a/b"
    )
    assert (
        public_url({"url": "s3://b/p", "endpointurl": "http://127.0.0.1:9000/"})
        == "http://127.0.0.1:9000/b/p"
    )
    assert public_url({"url": "https://u:pw@host.example/r"}) == "https://host.example/r"
    assert public_url({"url": "/srv/remote"}) is None
