"""Pull a release: ``dvc pull`` from the release's read-only URL, every object checked against its md5.

    blindmcq pull [URL] [--remote release] [-C DIR]

With a URL (the one ``blindmcq release`` printed and wrote to ``.dvc/config``), the DVC remote ``release``
is set to it in ``.dvc/config.local`` (git-ignored, so the clone stays clean); without one, the remote
named ``release`` of the clone's config is used. Either way ``verify = true`` is set for it: DVC's http
remote otherwise trusts an object's name, and a changed object on the server would be checked out and
then reported as up to date. A pull that fails is explained per output: which object the server does not
have, or which it serves with bytes that do not hash to the release's md5 (refused), with exit code 2.

Before anything is written (the local config included), what the release carries is checked
(:func:`check_release`): no tracked symlink, every stage's outputs and dependencies inside the clone with
no symlink on the way, every hash an md5, the committed config not moving the cache out of the clone, and
every ``.dir`` listing (fetched from the server, its bytes hashed to its name) naming only paths inside
its output. The checked listings are put into the cache, so DVC checks out exactly what was checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from blindmcq import atomic
from blindmcq.errors import BlindMCQError
from blindmcq.reporting.confine import inside, is_md5, md5_bytes, md5_file, parse_listing, symlink_on
from blindmcq.reporting.release import locked_outputs, safe_url

RELEASE_REMOTE = "release"
LISTING_LIMIT = 256 << 20  # a .dir listing larger than this is not a release's


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


def remote_url(repo: Any, name: str, url: str | None) -> str:
    """The http(s) URL to pull from: ``url``, else remote ``name`` of the clone's config."""
    if url is None:
        known = repo.config.get("remote", {})
        if name not in known:
            raise PullError(
                f"no DVC remote {name!r} in .dvc/config; give the release's URL (`blindmcq pull URL`, "
                "printed by `blindmcq release` and in the release tag's message)"
            )
        url = str(known[name].get("url", ""))
        if not url.startswith(("http://", "https://")):
            raise PullError(f"DVC remote {name!r} is {safe_url(url)!r}: a release is pulled over http(s)")
    elif not url.startswith(("http://", "https://")):
        raise PullError(f"release URL {safe_url(url)!r}: expected http:// or https:// (the read-only URL)")
    return url


def set_remote(root: Path, name: str, url: str | None) -> None:
    """Point remote ``name`` at ``url`` (local config, when given) and turn on ``verify``."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        with repo.config.edit("local") as conf:
            entry = conf["remote"].setdefault(name, {})
            if url is not None:
                entry["url"] = url
            entry["verify"] = True  # refuse objects whose bytes do not match their name


def _http_get(url: str, timeout: float = 30.0, limit: int | None = None) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read() if limit is None else response.read(limit + 1)
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
    got = md5_bytes(data)
    if got != md5.removesuffix(".dir"):
        return Problem(
            rel, md5, f"the server's bytes of {object_path(md5)} hash to {got}: changed after the release"
        )
    return Problem(rel, md5, f"{object_path(md5)} is intact on the server but was not checked out")


def diagnose(root: Path, url: str, cache: Path) -> list[Problem]:
    """Each output of ``dvc.lock`` whose objects are not all in the local cache, with the reason. A file
    output already in the clone with its pinned bytes (a ``cache: false`` metric git checked out) is
    not missing, so it is no problem."""
    problems: list[Problem] = []
    for path, md5 in locked_outputs(root).items():
        if not md5 or (not md5.endswith(".dir") and _intact(root / path, md5)):
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


def _intact(path: Path, md5: str) -> bool:
    """``path`` is a regular file (no symlink) whose bytes hash to ``md5``."""
    if path.is_symlink() or not path.is_file():
        return False
    return md5_file(path) == md5


def _git_symlinks(root: Path) -> list[str]:
    """Paths the clone's git index tracks as symlinks (none when ``root`` is not a git work tree)."""
    done = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-s", "-z"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return []
    return [line.split("\t", 1)[1] for line in done.stdout.split("\0") if line.startswith("120000 ")]


def _check_vars(root: Path) -> None:
    """Refuse a tracked ``dvc.yaml`` whose ``vars`` name a file outside the clone (DVC reads them on load)."""
    done = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--", "dvc.yaml", "*/dvc.yaml"],
        capture_output=True,
        text=True,
        check=False,
    )
    for rel in filter(None, done.stdout.split("\0") if done.returncode == 0 else ["dvc.yaml"]):
        path = root / rel
        if symlink_on(root, rel) or not path.is_file():
            continue  # a tracked symlink is refused by the caller; a missing file names nothing
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise PullError(f"{rel}: not valid YAML ({exc})") from exc
        stages = data.get("stages") if isinstance(data, dict) else None
        scopes = [data, *(stages.values() if isinstance(stages, dict) else [])]
        for scope in scopes:
            if not isinstance(scope, dict):
                continue
            base = os.path.join(root, Path(rel).parent, "" if scope is data else str(scope.get("wdir", "")))
            entries = scope.get("vars")
            for entry in entries if isinstance(entries, list) else []:
                name = entry.split(":", 1)[0] if isinstance(entry, str) else None
                if name and not inside(root, os.path.join(base, name)):
                    raise PullError(f"{rel}: vars file {name!r} is outside the clone; refused")


def _object(base: str, cache: Path, md5: str) -> bytes | None:
    """Object ``md5`` from the local cache, else from the server (None: it serves no such object)."""
    local = cache / md5[:2] / md5[2:]
    if local.is_file() and not local.is_symlink():
        return local.read_bytes()
    data = _http_get(f"{base.rstrip('/')}/{object_path(md5)}", limit=LISTING_LIMIT)
    if data is not None and len(data) > LISTING_LIMIT:
        raise PullError(f"{object_path(md5)}: over {LISTING_LIMIT:,} bytes; not a release's listing")
    return data


def check_release(root: Path, repo: Any, base: str) -> dict[str, bytes]:
    """Check what the clone's commit and the release's listings name, before anything is written.

    Returns the ``.dir`` listings fetched from ``base`` (md5 -> bytes) for the cache. Raises a PullError
    naming the first path that would leave the clone or pass a symlink, a hash that is not an md5, a
    committed cache outside the clone, or a listing that is missing, changed or names such a path.
    """
    links = _git_symlinks(root)
    if links:
        raise PullError(f"{links[0]}: the commit tracks a symlink; a release carries none, refused")
    committed = repo.config.load_one("repo")
    if committed.get("core", {}).get("site_cache_dir"):
        raise PullError(".dvc/config: core.site_cache_dir is set in the committed config; refused")
    cache_dir = committed.get("cache", {}).get("dir")
    if cache_dir and not inside(root, os.path.join(root, ".dvc", str(cache_dir))):
        raise PullError(f".dvc/config: cache.dir {cache_dir!r} is outside the clone; refused")
    cache = Path(repo.cache.local.path)
    if inside(root, cache):
        link = symlink_on(root, os.path.relpath(cache, root).replace(os.sep, "/"))
        if link:
            raise PullError(f"{link.relative_to(root)}: the DVC cache's path passes a symlink; refused")
    _check_vars(root)
    try:
        stages = list(repo.index.stages)
    except Exception as exc:  # DVC's own errors name the file
        raise PullError(f"the clone's DVC files could not be read: {exc}") from exc
    listings: dict[str, bytes] = {}
    for stage in stages:
        stage_file = os.path.relpath(stage.path, root)  # named from the clone, wherever the command ran
        for item in [*stage.deps, *stage.outs]:
            where = f"{stage_file}: {item.def_path}"
            fs_path = str(getattr(item, "fs_path", "") or "")
            if item.fs.protocol != "local":
                raise PullError(f"{where}: not a path in the clone ({item.fs.protocol}); refused")
            if getattr(item, "def_repo", None) or not fs_path or not inside(root, fs_path):
                raise PullError(f"{where}: outside the clone; refused")
            rel = os.path.relpath(fs_path, root).replace(os.sep, "/")
            link = symlink_on(root, rel) if rel != "." else None
            if link:
                raise PullError(f"{where}: passes the symlink {link.relative_to(root)}; refused")
        for out in stage.outs:
            md5 = out.hash_info.value if out.hash_info else None
            if md5 is None:
                continue
            where = f"{stage_file}: {out.def_path}"
            if not is_md5(md5, listing=True):
                raise PullError(f"{where}: hash {md5!r} is not an md5; refused")
            if not md5.endswith(".dir"):
                continue
            try:
                data = _object(base, cache, md5)
            except (urllib.error.URLError, OSError) as exc:
                raise PullError(f"{where}: listing {object_path(md5)} could not be read ({exc})") from exc
            if data is None:
                missing = f"the server does not serve its listing {object_path(md5)} (missing or not public)"
                raise PullError(f"{where}: {missing}")
            try:
                entries = parse_listing(data, md5)
            except ValueError as exc:
                raise PullError(f"{where}: listing {object_path(md5)}: {exc}; refused") from exc
            rel = os.path.relpath(out.fs_path, root).replace(os.sep, "/")
            for entry, _ in entries:
                link = symlink_on(root, f"{rel}/{entry}")
                if link:
                    raise PullError(f"{where}: {entry} passes the symlink {link.relative_to(root)}; refused")
            listings[md5] = data
    return listings


def pull(
    root: str | Path = ".", url: str | None = None, *, remote: str = RELEASE_REMOTE, jobs: int | None = None
) -> str:
    """``dvc pull -r remote`` with verification: DVC's summary line, or a PullError naming each failure.

    Everything the release names is checked first (:func:`check_release`); only then is the local config
    written, the checked listings put into the cache and DVC run."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    root = Path(root).resolve()
    try:
        opened = Repo(str(root))
    except DvcException as exc:
        raise PullError(f"{root}: not a DVC project ({exc})") from exc
    with opened as repo:
        target = remote_url(repo, remote, url)
        listings = check_release(root, repo, target)
        cache = Path(repo.cache.local.path)
    set_remote(root, remote, url)
    for md5, data in listings.items():
        obj = cache / md5[:2] / md5[2:]
        if not obj.is_file():
            atomic.write_bytes(obj, data)
    cmd = [sys.executable, "-m", "dvc", "pull", "-r", remote, *(["-j", str(jobs)] if jobs else [])]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    if done.returncode == 0:
        return lines[-1] if lines else "pulled"
    problems = diagnose(root, target, cache)
    if not problems:
        raise PullError(
            f"dvc pull -r {remote} ({safe_url(target)}) failed: {lines[-1] if lines else done.returncode}"
        )
    named = "; ".join(f"{p.path}: {p.why}" for p in problems)
    raise PullError(f"refused {len(problems)} output(s) from remote {remote!r} ({safe_url(target)}): {named}")
