"""Release: push the current commit's DVC-tracked artifacts to the DVC remote, then tag the commit.

A release is an ordinary DVC remote. After the push, the read-only URL users pull from (the bucket's
public HTTPS address, or ``--public-url``) is written to the git-tracked ``.dvc/config`` as the http
remote ``release`` (``verify = true``) and committed, so any clone can ``dvc pull -r release`` (or
``blindmcq pull``) and then ``dvc repro`` with nothing to run; the tag is put on that commit.

Refuses unless the release can be reproduced from the tag: ``dvc.lock``, ``dvc.yaml``, ``params.yaml``
and ``*.dvc`` committed, ``dvc status`` clean, and no credentials in the committed ``.dvc/config``.
Credentials come from the environment (``AWS_ACCESS_KEY_ID`` ...) or ``.dvc/config.local``; this module
never reads, prints or logs them, and remote URLs are logged without any user-info part.

    blindmcq release [--remote NAME] [--public-url URL] [--tag NAME] [--git-push ORIGIN] [-C DIR]
"""

from __future__ import annotations

import datetime as dt
import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from blindmcq.errors import BlindMCQError

log = logging.getLogger(__name__)

RELEASE_REMOTE = "release"  # the http remote users pull from (blindmcq.reporting.pull reads the same name)
# Files that pin what a release contains; uncommitted changes to them make the tag lie.
PINNED = ("dvc.lock", "dvc.yaml", "params.yaml", "*.dvc")
# Remote options that hold secrets (S3, Azure, GCS, SSH/HTTP, GDrive): never in the git-tracked config.
SECRET_OPTIONS = frozenset(
    {
        "access_key_id",
        "secret_access_key",
        "session_token",
        "password",
        "account_key",
        "sas_token",
        "connection_string",
        "client_secret",
        "gdrive_client_secret",
        "credentialpath",
        "key_file",
    }
)


class ReleaseError(BlindMCQError):
    """The workspace is not in a state that can be released; the message says what to do."""


@dataclass(frozen=True)
class Release:
    tag: str
    commit: str
    remote: str
    pushed: int  # files uploaded now (0 when the remote already held them all)
    outputs: dict[str, str]  # path -> md5 of every DVC-tracked output at this commit
    pull_url: str | None = None  # the read-only URL written as remote "release" (None: none known)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def safe_url(url: str) -> str:
    """The URL without user name or password, for messages."""
    parts = urlsplit(url)
    if not parts.username and not parts.password:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def default_tag(commit: str, today: dt.date | None = None) -> str:
    today = today or dt.datetime.now(dt.UTC).date()
    return f"release-{today:%Y%m%d}-{commit[:7]}"


def _outputs(lock: str | None, dvc_files: list[str]) -> dict[str, str]:
    """path -> md5 of each output in a ``dvc.lock`` text and in ``*.dvc`` texts."""
    out: dict[str, str] = {}
    stages = (yaml.safe_load(lock) or {}).get("stages", {}) if lock is not None else {}
    for stage in stages.values():
        for o in stage.get("outs", []):
            out[o["path"]] = o.get("md5", "")
    for text in dvc_files:
        for o in (yaml.safe_load(text) or {}).get("outs", []):
            out[o["path"]] = o.get("md5", "")
    return dict(sorted(out.items()))


def locked_outputs(root: Path) -> dict[str, str]:
    """path -> md5 of each output in ``dvc.lock`` and each ``*.dvc`` file at the project root."""
    lock = root / "dvc.lock"
    dvc_files = sorted(p for p in root.glob("*.dvc") if p.is_file())
    return _outputs(
        lock.read_text(encoding="utf-8") if lock.exists() else None,
        [p.read_text(encoding="utf-8") for p in dvc_files],
    )


def committed_outputs(root: Path, commit: str) -> dict[str, str]:
    """:func:`locked_outputs` as commit ``commit`` (40 hex digits) of the git clone ``root`` pins them."""
    rows = [line.split("\t", 1) for line in _git(root, "ls-tree", commit).splitlines()]
    names = {name for meta, name in rows if meta.split()[1] == "blob"}  # files, not the .dvc/ folder
    dvc_files = [_git(root, "show", f"{commit}:{n}") for n in sorted(names) if n.endswith(".dvc")]
    lock = _git(root, "show", f"{commit}:dvc.lock") if "dvc.lock" in names else None
    return _outputs(lock, dvc_files)


def check_committed(root: Path) -> None:
    dirty = _git(root, "status", "--porcelain", "--", *PINNED)
    if dirty:
        names = ", ".join(line.split()[-1] for line in dirty.splitlines())
        raise ReleaseError(f"uncommitted changes to {names}; commit them so the tag pins what is pushed")


def check_up_to_date(repo: Any) -> None:
    status = repo.status()
    if status:
        # keys are "path/dvc.yaml:stage" (relative to the cwd) or "path/x.dvc": name them shortly
        stale = ", ".join(sorted(k.rsplit(":", 1)[-1] if ":" in k else Path(k).name for k in status))
        raise ReleaseError(f"outputs are not up to date ({stale}); run `dvc repro` and commit dvc.lock")


def check_no_secrets(repo: Any) -> None:
    committed = repo.config.load_one("repo")
    for name, options in committed.get("remote", {}).items():
        leaked = sorted(SECRET_OPTIONS & set(options))
        if leaked:
            raise ReleaseError(
                f"remote {name!r} has {', '.join(leaked)} in the git-tracked .dvc/config; remove it "
                f"(`dvc remote modify --unset {name} {leaked[0]}`) and pass credentials through the "
                "environment or `dvc remote modify --local`"
            )


def resolve_remote(repo: Any, remote: str | None) -> tuple[str, str]:
    """(name, URL) of the remote to push to: the one given, else the project's default."""
    dvc_settings = repo.config  # DVC's own settings (.dvc/config), not the project's configuration
    name = remote or dvc_settings.get("core", {}).get("remote")
    if not name:
        raise ReleaseError(
            "no DVC remote given and no default set; e.g. `dvc remote add -d store s3://bucket/blindmcq`"
        )
    remotes = dvc_settings.get("remote", {})
    if name not in remotes:
        raise ReleaseError(f"unknown DVC remote {name!r}; configured: {sorted(remotes) or 'none'}")
    return name, safe_url(str(remotes[name].get("url", "")))


def public_url(options: dict[str, Any]) -> str | None:
    """The read-only HTTPS URL a pushed remote is served at, when the remote's config says it.

    ``s3://bucket/prefix`` -> ``https://bucket.s3[.region].amazonaws.com/prefix`` (the objects must be
    public-read: a bucket policy allowing ``s3:GetObject`` on the prefix), or ``ENDPOINT/bucket/prefix``
    for an S3-compatible endpoint (``endpointurl``); an http(s) remote is its own URL. None otherwise.
    """
    url = str(options.get("url", ""))
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return safe_url(url)
    if parts.scheme != "s3" or not parts.netloc:
        return None
    bucket, prefix = parts.netloc, parts.path.strip("/")
    endpoint = str(options.get("endpointurl") or "").rstrip("/")
    if endpoint:
        base = f"{safe_url(endpoint)}/{bucket}"
    else:
        region = options.get("region")
        base = (
            f"https://{bucket}.s3.{region}.amazonaws.com" if region else f"https://{bucket}.s3.amazonaws.com"
        )
    return f"{base}/{prefix}" if prefix else base


def check_pull_url(url: str) -> None:
    if urlsplit(url).scheme not in ("http", "https"):
        raise ReleaseError(f"--public-url {safe_url(url)!r}: expected an http:// or https:// URL")
    if safe_url(url) != url:
        raise ReleaseError("--public-url carries a user name or password; give the read-only URL without it")


def write_pull_remote(root: Path, url: str) -> bool:
    """Set the http remote ``release`` to ``url`` (verify on) in the tracked config; commit it if changed."""
    from dvc.repo import Repo

    check_pull_url(url)
    with Repo(str(root)) as repo:
        with repo.config.edit("repo") as conf:
            conf["remote"][RELEASE_REMOTE] = {"url": url, "verify": True}
    if not _git(root, "status", "--porcelain", "--", ".dvc/config"):
        return False
    _git(root, "add", "--", ".dvc/config")
    _git(
        root,
        "commit",
        "-q",
        "-m",
        f"release: pull from {url} (DVC remote {RELEASE_REMOTE!r})",
        "--",
        ".dvc/config",
    )
    return True


def release(
    root: str | Path = ".",
    *,
    remote: str | None = None,
    tag: str | None = None,
    jobs: int | None = None,
    git_remote: str | None = None,
    pull_url: str | None = None,
) -> Release:
    """Check, push every DVC-tracked output of HEAD to ``remote``, write the pull URL, ``git tag -a``.

    The tag is made only after the push succeeded, so a tag always names data the remote holds.
    ``pull_url`` (else :func:`public_url` of the remote) becomes the http remote ``release`` in
    ``.dvc/config``, committed on its own (same ``dvc.lock``), and the tag goes on that commit.
    ``git_remote`` (e.g. "origin") also pushes the tag there.
    """
    from dvc.repo import Repo  # DVC stays out of import time for the rest of the package

    root = Path(_git(Path(root), "rev-parse", "--show-toplevel"))
    commit = _git(root, "rev-parse", "HEAD")
    tag = tag or default_tag(commit)
    if pull_url:
        check_pull_url(pull_url)  # before anything is pushed
    if _git(root, "tag", "--list", tag):
        raise ReleaseError(f"tag {tag!r} already exists; give another with --tag")
    check_committed(root)
    with Repo(str(root)) as repo:
        check_no_secrets(repo)
        name, url = resolve_remote(repo, remote)
        pull_url = pull_url or public_url(dict(repo.config["remote"][name]))
        check_up_to_date(repo)
        outputs = locked_outputs(root)
        log.info("pushing %d outputs of %s to remote %r (%s)", len(outputs), commit[:7], name, url)
        try:
            pushed = int(repo.push(remote=name, jobs=jobs) or 0)
        except Exception as exc:  # DVC's own errors; the message names the file or the remote
            raise ReleaseError(f"dvc push to remote {name!r} ({url}) failed: {exc}") from exc
    if pull_url and write_pull_remote(root, pull_url):
        commit = _git(root, "rev-parse", "HEAD")  # the config commit: same dvc.lock, and the pull URL
    lines = [f"blindmcq release of {commit}", f"DVC remote: {name} ({url})"]
    if pull_url:
        lines.append(f"Pull (read-only): dvc pull -r {RELEASE_REMOTE}, or blindmcq pull {pull_url}")
    lines.append("")
    lines += [f"{md5}  {path}" for path, md5 in outputs.items()]
    _git(root, "tag", "-a", tag, "-m", "\n".join(lines), commit)
    if git_remote:
        _git(root, "push", git_remote, f"refs/tags/{tag}")
    log.info("tagged %s as %s (%d files uploaded)", commit[:7], tag, pushed)
    return Release(tag=tag, commit=commit, remote=name, pushed=pushed, outputs=outputs, pull_url=pull_url)
