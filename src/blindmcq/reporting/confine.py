"""What a release may name: paths that stay inside the folder they are read in, no symlinks, real md5s.

A release (a commit's ``dvc.lock`` and the ``.dir`` listings it pins, or a release folder and its
``release.json``) is data from someone else. Every path it names is checked here before anything is
read or written: relative, no ``..`` or empty part, no symlink on the way down from the root, and every
object name a 32-digit md5 (a ``.dir`` suffix for a listing), since object names become cache paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath

MD5 = re.compile(r"[0-9a-f]{32}")
GIT_COMMIT = re.compile(r"[0-9a-f]{40}")


def md5_bytes(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def md5_file(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, lambda: hashlib.md5(usedforsecurity=False)).hexdigest()


def path_problem(rel: object) -> str | None:
    """Why ``rel`` is not a plain relative path inside its root (None when it is one)."""
    if not isinstance(rel, str) or not rel:
        return "is not a non-empty string"
    if "\x00" in rel or "\\" in rel:
        return "holds a NUL or a backslash"
    if rel.startswith("/") or PurePosixPath(rel).is_absolute():
        return "is absolute"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "has an empty, '.' or '..' part (it would leave its folder)"
    return None


def symlink_on(root: Path, rel: str) -> Path | None:
    """The first symlink on the way from ``root`` down to ``root/rel`` (the target itself included)."""
    here = root
    for part in rel.split("/"):
        here = here / part
        if here.is_symlink():
            return here
        if not here.exists():
            return None  # nothing further down exists yet
    return None


def inside(root: Path, path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (absolute, or relative to ``root``) lies under ``root``, ``..`` resolved by name."""
    full = os.path.normpath(os.path.join(root, path))
    base = os.path.normpath(root)
    return full == base or full.startswith(base.rstrip(os.sep) + os.sep)


def is_md5(value: object, *, listing: bool = False) -> bool:
    """A 32-digit lowercase md5; with ``listing``, also one ending in ``.dir``."""
    if not isinstance(value, str):
        return False
    if listing and value.endswith(".dir"):
        value = value.removesuffix(".dir")
    return MD5.fullmatch(value) is not None


def parse_listing(data: bytes, md5: str) -> list[tuple[str, str]]:
    """(relpath, md5) of each entry of the ``.dir`` listing ``data``, named ``md5``; ValueError saying
    why when its bytes do not hash to its name, it is not DVC's listing, or an entry leaves its folder."""
    got = md5_bytes(data)
    if got != md5.removesuffix(".dir"):
        raise ValueError(f"its bytes hash to {got}, not to its name")
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a JSON listing ({exc})") from exc
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise ValueError("not a list of {relpath, md5} entries")
    entries = []
    for entry in raw:
        rel, inner = entry.get("relpath"), entry.get("md5")
        why = path_problem(rel)
        if why:
            raise ValueError(f"entry relpath {rel!r} {why}")
        if not is_md5(inner):
            raise ValueError(f"entry {rel!r} has md5 {inner!r}, not an md5")
        entries.append((str(rel), str(inner)))
    return entries
