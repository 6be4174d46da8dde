"""Hostile releases: nothing a release carries makes ``blindmcq pull`` write, read or follow a path outside
the clone, and every refusal is one line, exit code 2, with nothing written.

Each attack is a small git clone whose commit (``dvc.yaml``, ``dvc.lock``, ``.dvc/config``, tracked
files) and whose remote (the ``.dir`` listings and objects, served by ``http.server`` in a thread) were
made by the attacker; a victim file sits beside the clone. The control pulls the same clone with an
honest listing through the real dvc CLI, so each refusal is the check's doing, not a broken setup.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from blindmcq.cli.pull import main
from blindmcq.reporting.pull import object_path
from test_release_http import Served  # same folder (pytest's rootdir import mode)

PAYLOAD = b"released bytes\n"
PRECIOUS = "the victim's own bytes\n"


def md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def listing(entries: list[tuple[str, bytes]]) -> bytes:
    """A DVC ``.dir`` listing's bytes, as DVC writes them."""
    rows = sorted(({"md5": md5(data), "relpath": rel} for rel, data in entries), key=lambda e: e["relpath"])
    return json.dumps(rows, sort_keys=True).encode("utf-8")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
    )


class Release:
    """A clone (``root``), its remote folder (``store``) and a victim file beside them."""

    def __init__(self, base: Path) -> None:
        self.base, self.root, self.store = base, base / "clone", base / "store"
        self.victim = base / "victim.txt"
        self.victim.write_text(PRECIOUS, encoding="utf-8")
        self.root.mkdir()
        (self.root / ".dvc").mkdir()
        (self.root / ".dvc" / "config").write_text("", encoding="utf-8")
        (self.root / ".dvc" / ".gitignore").write_text("/config.local\n/tmp\n/cache\n", encoding="utf-8")
        self.outs: list[dict] = []

    def put(self, data: bytes, name: str | None = None) -> str:
        """Store an object on the remote under ``name`` (default: its md5); return the name."""
        name = name or md5(data)
        path = self.store / object_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return name

    def dir_out(self, path: str, entries: list[tuple[str, bytes]], served: bytes | None = None) -> None:
        """A directory output pinned to the listing of ``entries`` (the server may serve other bytes)."""
        pinned = listing(entries)
        name = md5(pinned) + ".dir"
        self.put(served if served is not None else pinned, name)
        for _, data in entries:
            self.put(data)
        self.outs.append({"path": path, "hash": "md5", "md5": name, "nfiles": len(entries)})

    def file_out(self, path: str, data: bytes = PAYLOAD, name: str | None = None) -> None:
        self.outs.append({"path": path, "hash": "md5", "md5": self.put(data, name)})

    def commit(self) -> None:
        stage = {"cmd": "true", "outs": [o["path"] for o in self.outs]}
        (self.root / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"make": stage}}), encoding="utf-8")
        lock = {"schema": "2.0", "stages": {"make": {"cmd": "true", "outs": self.outs}}}
        (self.root / "dvc.lock").write_text(yaml.safe_dump(lock), encoding="utf-8")
        (self.root / ".gitignore").write_text("/out\n", encoding="utf-8")
        git(self.root, "init", "-q", "-b", "main")
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "release")


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` (DVC's own scratch folder .dvc/tmp aside): bytes, or a symlink's target."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if rel == ".dvc/tmp" or rel.startswith((".dvc/tmp/", ".git/")):
                continue
            if path.is_symlink():
                out[rel] = os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "dir"
    return out


@pytest.fixture
def release(tmp_path) -> Release:
    return Release(tmp_path)


def refused(release: Release, capsys, says: str | tuple[str, ...], served: Served | None = None) -> str:
    """Run ``blindmcq pull URL`` in the clone; assert exit 2, one line, ``says``, nothing written."""
    outside = sorted(p.name for p in release.base.iterdir())
    before = tree(release.root)
    own = served or Served(release.store)
    try:
        code = main(["-C", str(release.root), own.url])
    finally:
        if served is None:
            own.close()
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("blindmcq pull: error: "), err
    assert all(part in err for part in ((says,) if isinstance(says, str) else says)), err
    assert release.victim.read_text(encoding="utf-8") == PRECIOUS
    assert sorted(p.name for p in release.base.iterdir()) == outside  # nothing new beside the clone
    assert tree(release.root) == before  # not even .dvc/config.local
    return err


def test_an_honest_release_is_pulled(release, tmp_path):
    release.dir_out("out", [("a.txt", PAYLOAD), ("sub/b.txt", b"b\n")])
    release.commit()
    served = Served(release.store)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "blindmcq.cli", "pull", served.url],
            cwd=release.root,
            capture_output=True,
            text=True,
            env={**os.environ, "DVC_NO_ANALYTICS": "1"},
        )
    finally:
        served.close()
    assert done.returncode == 0, done.stderr
    assert (release.root / "out/a.txt").read_bytes() == PAYLOAD
    assert (release.root / "out/sub/b.txt").read_bytes() == b"b\n"


ATTACKS: dict[str, tuple[Callable[[Release], None], str | tuple[str, ...]]] = {
    "dotdot relpath in a .dir listing": (  # plain `dvc pull` overwrites the victim with it
        lambda r: r.dir_out("out", [("../../victim.txt", PAYLOAD), ("ok.txt", b"x")]),
        (
            "error: dvc.yaml: out: listing files/md5/",
            "entry relpath '../../victim.txt' has an empty, '.' or '..' part",
        ),
    ),
    "absolute relpath in a .dir listing": (
        lambda r: r.dir_out("out", [(str(r.victim), PAYLOAD)]),
        "is absolute",
    ),
    "dvc.lock output outside the clone": (
        lambda r: r.file_out("../victim.txt"),
        "dvc.yaml: ../victim.txt: outside the clone; refused",
    ),
    "dvc.lock output by absolute path": (
        lambda r: r.file_out(str(r.victim)),
        "outside the clone; refused",
    ),
    "object name that is a path": (
        lambda r: r.file_out("out.txt", name="../../../../victim"),
        "hash '../../../../victim' is not an md5",
    ),
    "listing served with other bytes than the pinned ones": (
        lambda r: r.dir_out("out", [("ok.txt", PAYLOAD)], served=listing([("../../victim.txt", PAYLOAD)])),
        "bytes hash to",
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_release_is_refused_before_anything_is_written(release, capsys, attack):
    make, says = ATTACKS[attack]
    make(release)
    release.commit()
    refused(release, capsys, says)


def test_a_tracked_symlink_is_refused(release, capsys):
    (release.base / "elsewhere").mkdir()
    release.dir_out("out", [("victim.txt", PAYLOAD)])
    (release.root / "out").symlink_to(release.base / "elsewhere")
    release.commit()
    git(release.root, "add", "-f", "out")
    git(release.root, "commit", "-q", "-m", "link")
    refused(release, capsys, "out: the commit tracks a symlink")
    assert not any((release.base / "elsewhere").iterdir())


def test_an_untracked_symlink_on_an_output_path_is_not_followed(release, capsys):
    (release.base / "elsewhere").mkdir()
    release.dir_out("out", [("victim.txt", PAYLOAD)])
    release.commit()
    (release.root / "out").symlink_to(release.base / "elsewhere")
    refused(release, capsys, "passes the symlink out")
    assert not any((release.base / "elsewhere").iterdir())


def test_a_committed_cache_outside_the_clone_is_refused(release, capsys):
    release.dir_out("out", [("a.txt", PAYLOAD)])
    (release.root / ".dvc" / "config").write_text("[cache]\n    dir = ../../cache\n", encoding="utf-8")
    release.commit()
    refused(release, capsys, f"cache.dir '{release.base / 'cache'}' is outside the clone")


def test_vars_outside_the_clone_are_refused(release, capsys):
    release.file_out("out.txt")
    release.commit()
    pipeline = yaml.safe_load((release.root / "dvc.yaml").read_text(encoding="utf-8"))
    pipeline["vars"] = ["../victim.txt"]
    (release.root / "dvc.yaml").write_text(yaml.safe_dump(pipeline), encoding="utf-8")
    git(release.root, "commit", "-q", "-am", "vars")
    refused(release, capsys, "dvc.yaml: vars file '../victim.txt' is outside the clone")


def test_a_missing_listing_is_refused_up_front(release, capsys):
    release.dir_out("out", [("a.txt", PAYLOAD)])
    release.commit()
    name = release.outs[0]["md5"]
    (release.store / object_path(name)).unlink()
    refused(release, capsys, f"the server does not serve its listing {object_path(name)}")


def test_a_committed_remote_that_is_not_http_is_refused(release, capsys):
    release.file_out("out.txt")
    (release.root / ".dvc" / "config").write_text(
        f"['remote \"release\"']\n    url = {release.store}\n", encoding="utf-8"
    )
    release.commit()
    before = tree(release.root)
    assert main(["-C", str(release.root)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "a release is pulled over http(s)" in err, err
    assert tree(release.root) == before


# --- the release folder (`blindmcq report --from`) -------------------------------------------------------

SHIPPED = Path(__file__).resolve().parents[1] / "releases" / "default"
DIR_OUTS = ("results/baselines", "results/corpus", "results/gate", "results/predictions")


@pytest.fixture(scope="module")
def pinned_template(tmp_path_factory) -> Path:
    """A git clone whose commit pins the shipped release's files (dvc.lock and params.yaml), and the
    release folder exported from it: ``base/project``, ``base/release``."""
    from blindmcq.reporting.bundle import dir_listing, export_bundle, md5_file

    base = tmp_path_factory.mktemp("pinned")
    project = base / "project"
    shutil.copytree(SHIPPED, project)
    (project / "release.json").unlink()
    outs = [{"path": d, "hash": "md5", "md5": md5(dir_listing(project / d)) + ".dir"} for d in DIR_OUTS] + [
        {"path": str(p.relative_to(project)), "hash": "md5", "md5": md5_file(p)}
        for p in sorted([project / "reports/metrics.json", *(project / "results/interventions").rglob("*.*")])
    ]
    lock = {"schema": "2.0", "stages": {"all": {"cmd": "true", "outs": outs}}}
    (project / "dvc.lock").write_text(yaml.safe_dump(lock), encoding="utf-8")
    (project / ".gitignore").write_text("/results/\n/reports/\n", encoding="utf-8")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "the run")
    export_bundle(project, base / "release")
    return base


@pytest.fixture
def pinned(pinned_template, tmp_path) -> dict[str, Path]:
    shutil.copytree(pinned_template, tmp_path, dirs_exist_ok=True, symlinks=True)
    victim = tmp_path / "victim.txt"
    victim.write_text(PRECIOUS, encoding="utf-8")
    return {
        "base": tmp_path,
        "project": tmp_path / "project",
        "release": tmp_path / "release",
        "victim": victim,
    }


def manifest_of(release: Path) -> dict:
    return json.loads((release / "release.json").read_text(encoding="utf-8"))


def write_manifest(release: Path, manifest: dict) -> None:
    (release / "release.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def swap_predictions(release: Path) -> tuple[Path, dict]:
    """Other predictions in the release, their md5 and size updated in release.json (commit as it was)."""
    target = release / "results/predictions/predictions.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    manifest = manifest_of(release)
    manifest["files"]["results/predictions/predictions.parquet"] = {
        "md5": md5(bytes(data)),
        "bytes": len(data),
    }
    write_manifest(release, manifest)
    return target, manifest


def report_refused(pinned: dict[str, Path], capsys, says: str, *args: str, out: Path | None = None) -> str:
    """``blindmcq report --from`` the release: exit 2, one line naming ``says``, nothing written."""
    from blindmcq.cli.report import main as report

    out = out or pinned["base"] / "look"
    before = tree(pinned["base"])
    code = report(["--from", str(pinned["release"]), "--out", str(out), "-C", str(pinned["project"]), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("blindmcq report: error: ") and says in err, err
    assert tree(pinned["base"]) == before  # nothing written, the victim as it was
    assert pinned["victim"].read_text(encoding="utf-8") == PRECIOUS
    return err


def test_an_exported_release_passes_the_commit_check(pinned):
    from blindmcq.reporting.bundle import check_commit, verify_bundle

    manifest = verify_bundle(pinned["release"])
    assert set(manifest["dvc_listings"]) == set(DIR_OUTS)
    head = subprocess.run(
        ["git", "-C", str(pinned["project"]), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert check_commit(pinned["release"], manifest, pinned["project"]) == head == manifest["commit"]


def test_swapped_predictions_are_refused_naming_them(pinned, capsys):
    target, _ = swap_predictions(pinned["release"])
    err = report_refused(pinned, capsys, "swapped after the release; refused")
    assert str(target) in err


def test_swapped_predictions_with_their_listing_are_refused(pinned, capsys):
    _, manifest = swap_predictions(pinned["release"])
    rows = json.loads(manifest["dvc_listings"]["results/predictions"])
    for row in rows:
        if row["relpath"] == "predictions.parquet":
            row["md5"] = manifest["files"]["results/predictions/predictions.parquet"]["md5"]
    manifest["dvc_listings"]["results/predictions"] = json.dumps(rows, sort_keys=True)
    write_manifest(pinned["release"], manifest)
    report_refused(pinned, capsys, "dvc_listings['results/predictions'] is not the listing commit")


def test_swapped_predictions_with_new_dvc_outputs_are_refused(pinned, capsys):
    _, manifest = swap_predictions(pinned["release"])
    manifest["dvc_outputs"]["results/predictions"] = "0" * 32 + ".dir"
    write_manifest(pinned["release"], manifest)
    report_refused(pinned, capsys, "dvc_outputs['results/predictions'] is '" + "0" * 32)


def test_a_swapped_git_tracked_file_is_refused(pinned, capsys):
    params = pinned["release"] / "params.yaml"
    text = params.read_text(encoding="utf-8") + "# swapped\n"
    params.write_text(text, encoding="utf-8")
    manifest = manifest_of(pinned["release"])
    manifest["files"]["params.yaml"] = {"md5": md5(text.encode()), "bytes": len(text.encode())}
    write_manifest(pinned["release"], manifest)
    report_refused(pinned, capsys, f"{params}: md5")


@pytest.mark.parametrize(
    ("commit", "says"),
    [
        ("0" * 40, "is not in the clone"),
        ("--output=../victim.txt", "is not a git commit"),
        (None, "commit None is not a git commit"),
    ],
)
def test_a_commit_that_cannot_be_checked_is_refused(pinned, capsys, commit, says):
    manifest = manifest_of(pinned["release"])
    manifest["commit"] = commit
    write_manifest(pinned["release"], manifest)
    report_refused(pinned, capsys, says)


def test_no_clone_no_report(pinned, capsys):
    shutil.rmtree(pinned["project"] / ".git")
    report_refused(pinned, capsys, "not a git clone of the project")


def test_a_git_repository_inside_the_release_folder_is_not_trusted(pinned, capsys):
    release = pinned["release"]
    shutil.copytree(pinned["project"] / ".git", release / ".git")
    from blindmcq.cli.report import main as report

    assert report(["--from", str(release), "--out", str(pinned["base"] / "look"), "-C", str(release)]) == 2
    err = capsys.readouterr().err.strip()
    assert "a git repository inside the release folder" in err, err
    assert not (pinned["base"] / "look").exists()


@pytest.mark.parametrize("what", ["predictions", "manifest", "folder"])
def test_a_symlink_in_the_release_folder_is_not_followed(pinned, capsys, what):
    release = pinned["release"]
    if what == "predictions":  # same bytes, kept outside: the md5 matches, the link is still refused
        target = release / "results/predictions/predictions.parquet"
        outside = pinned["base"] / "outside.parquet"
        shutil.move(target, outside)
        target.symlink_to(outside)
    elif what == "manifest":
        shutil.move(release / "release.json", pinned["base"] / "outside.json")
        (release / "release.json").symlink_to(pinned["base"] / "outside.json")
    else:
        shutil.move(release / "results/gate", pinned["base"] / "gate")
        (release / "results/gate").symlink_to(pinned["base"] / "gate")
    report_refused(pinned, capsys, "symlink")


@pytest.mark.parametrize(
    ("rel", "says"),
    [("/etc/passwd", "leaves the release folder"), ("src/blindmcq/stats.py", "is not one a release carries")],
)
def test_a_manifest_naming_other_paths_is_refused(pinned, capsys, rel, says):
    manifest = manifest_of(pinned["release"])
    manifest["files"][rel] = {"md5": "0" * 32, "bytes": 0}
    write_manifest(pinned["release"], manifest)
    report_refused(pinned, capsys, says)


def test_a_release_without_listings_is_refused(pinned, capsys):
    manifest = manifest_of(pinned["release"])
    del manifest["dvc_listings"]
    write_manifest(pinned["release"], manifest)
    report_refused(pinned, capsys, "whose listing release.json does not carry (dvc_listings)")


def test_out_an_existing_file_is_refused(pinned, capsys):
    readme = pinned["base"] / "README.md"
    readme.write_text("# mine\n", encoding="utf-8")
    report_refused(pinned, capsys, f"{readme}: exists and is not a folder", out=readme)
    assert readme.read_text(encoding="utf-8") == "# mine\n"


def test_out_inside_the_release_folder_is_refused(pinned, capsys):
    report_refused(pinned, capsys, "inside the release folder", out=pinned["release"] / "look")


def test_out_in_a_folder_that_cannot_be_written_is_refused(pinned, capsys):
    report_refused(pinned, capsys, "cannot write in /proc", out=Path("/proc/blindmcq-look"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_out_in_a_read_only_folder_is_refused(pinned, capsys):
    locked = pinned["base"] / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        report_refused(pinned, capsys, "cannot write in", out=locked / "look")
    finally:
        locked.chmod(0o755)


@pytest.mark.slow
def test_a_release_its_commit_pins_is_reported(pinned):
    env = {**os.environ, "BLINDMCQ_CACHE": str(pinned["base"] / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "blindmcq.cli",
            "report",
            "--from",
            "release",
            "--out",
            "look",
            "-C",
            "project",
        ],
        cwd=pinned["base"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    commit = manifest_of(pinned["release"])["commit"]
    assert f"every file checked against what commit {commit[:12]} pins" in done.stdout
    assert "byte-identical to the released run's reports/metrics.json" in done.stdout
    look = pinned["base"] / "look"
    assert (look / "metrics.json").read_bytes() == (pinned["release"] / "reports/metrics.json").read_bytes()
    assert (look / "html/index.html").is_file() and any((look / "figures").glob("*.png"))


def test_pull_outside_a_dvc_project_is_one_line(tmp_path, capsys):
    assert main(["-C", str(tmp_path), "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{tmp_path}: not a DVC project" in err, err
    assert not any(tmp_path.iterdir())
