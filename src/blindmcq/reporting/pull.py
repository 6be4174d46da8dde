"""Pull a release: ``dvc pull`` from the release's read-only URL, every object checked against its md5.

    blindmcq pull [URL] [--remote release] [-C DIR]

With a URL (the one ``blindmcq release`` printed and wrote to ``.dvc/config``), the DVC remote ``release``
is set to it in ``.dvc/config.local`` (git-ignored, so the clone stays clean); without one, the remote
named ``release`` of the clone's config is used. Either way ``verify = true`` is set for it: DVC's http
remote otherwise trusts an object's name, and a changed object on the server would be checked out and
then reported as up to date. A pull that fails is explained per output: which object the server does not
have, or which it serves with bytes that do not hash to the release's md5 (refused), with exit code 2.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from blindmcq.errors import BlindMCQError
from blindmcq.reporting.release import locked_outputs, safe_url

RELEASE_REMOTE = "release"


class PullError(BlindMCQError):
    """The release could not be pulled as released; the message names the output and object."""


@dataclass(frozen=True)
class Problem:
    path: str  # the output (or the file inside a directory output)
    md5: str  # the object's name: what the release says its bytes hash to
    why: str


def object_path(md5: str) -> str:
    """An object's path under a DVC 3 remote or cache: ``files/md5/ab/cdef...`` (``.dir`` kept)."""
    return f"files/md5/{md5[:2]}/{md5[2:]}"


def set_remote(root: Path, name: str, url: str | None) -> str:
    """Point remote ``name`` at ``url`` (local config) and turn on ``verify``; return its URL."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        known = repo.config.get("remote", {})
        if url is None and name not in known:
            raise PullError(
                f"no DVC remote {name!r} in .dvc/config; give the release's URL (`blindmcq pull URL`, "
                "printed by `blindmcq release` and in the release tag's message)"
            )
        with repo.config.edit("local") as conf:
            entry = conf["remote"].setdefault(name, {})
            if url is not None:
                entry["url"] = url
            entry["verify"] = True  # refuse objects whose bytes do not match their name
        return str(url if url is not None else known[name].get("url", ""))


def _http_get(url: str, timeout: float = 30.0) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (403, 404):
            return None
        raise


def _check_object(base: str, rel: str, md5: str) -> Problem:
    """Why object ``md5`` did not arrive, asked of the server itself."""
    if not base.startswith(("http://", "https://")):
        return Problem(rel, md5, f"{object_path(md5)} did not arrive from the remote")
    where = f"{base.rstrip('/')}/{object_path(md5)}"
    try:
        data = _http_get(where)
    except (urllib.error.URLError, OSError) as exc:
        return Problem(rel, md5, f"{object_path(md5)} could not be read ({exc})")
    if data is None:
        return Problem(rel, md5, f"the server does not serve {object_path(md5)} (missing or not public)")
    got = hashlib.md5(data, usedforsecurity=False).hexdigest()
    if got != md5.removesuffix(".dir"):
        return Problem(
            rel, md5, f"the server's bytes of {object_path(md5)} hash to {got}: changed after the release"
        )
    return Problem(rel, md5, f"{object_path(md5)} is intact on the server but was not checked out")


def diagnose(root: Path, url: str, cache: Path) -> list[Problem]:
    """Each output of ``dvc.lock`` whose objects are not all in the local cache, with the reason."""
    problems: list[Problem] = []
    for path, md5 in locked_outputs(root).items():
        if not md5:
            continue
        obj = cache / md5[:2] / md5[2:]
        if not obj.is_file():
            problems.append(_check_object(url, path, md5))
            continue
        if md5.endswith(".dir"):
            for entry in json.loads(obj.read_text(encoding="utf-8")):
                inner = entry.get("md5", "")
                if inner and not (cache / inner[:2] / inner[2:]).is_file():
                    problems.append(_check_object(url, f"{path}/{entry.get('relpath', '')}", inner))
    return problems


def pull(
    root: str | Path = ".", url: str | None = None, *, remote: str = RELEASE_REMOTE, jobs: int | None = None
) -> str:
    """``dvc pull -r remote`` with verification: DVC's summary line, or a PullError naming each failure."""
    from dvc.repo import Repo

    root = Path(root).resolve()
    if url is not None and "://" in url and not url.startswith(("http://", "https://")):
        raise PullError(f"release URL {safe_url(url)!r}: expected http:// or https:// (the read-only URL)")
    target = set_remote(root, remote, url)
    cmd = [sys.executable, "-m", "dvc", "pull", "-r", remote, *(["-j", str(jobs)] if jobs else [])]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    if done.returncode == 0:
        return lines[-1] if lines else "pulled"
    with Repo(str(root)) as repo:
        cache = Path(repo.cache.local.path)
    problems = diagnose(root, target, cache)
    if not problems:
        raise PullError(
            f"dvc pull -r {remote} ({safe_url(target)}) failed: {lines[-1] if lines else done.returncode}"
        )
    named = "; ".join(f"{p.path}: {p.why}" for p in problems)
    raise PullError(f"refused {len(problems)} output(s) from remote {remote!r} ({safe_url(target)}): {named}")
