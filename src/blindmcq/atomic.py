"""Write files all-or-nothing: to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path; on success it replaces ``target``, on error it is removed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(target: str | os.PathLike[str], text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(target: str | os.PathLike[str], data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def replace_tree(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Copy folder ``source`` to ``target``, replacing it only once the copy is complete.

    The copy is built in a temporary folder beside ``target`` and swapped in by renames, so a failed
    copy leaves the old ``target`` as it was (a report never links to images that were deleted)."""
    import shutil

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    old = tmp.with_suffix(".old")
    try:
        shutil.copytree(source, tmp, dirs_exist_ok=True)
        if target.exists():
            os.replace(target, old)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
