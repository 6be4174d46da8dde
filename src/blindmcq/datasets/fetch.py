"""``make data``: fill ``data/``, the full inputs (recorded in ``data-sources.yaml``); check a config's.

The core only: ``blindmcq data fill`` (``cli/data.py``, what ``make data`` runs) calls :func:`fill`, and
the pipeline's ``inputs`` stage (``stages/inputs.py``) calls :func:`check`.

Sources, in order, each file checked against the sha256 in ``data-sources.yaml`` before it is used:

1. an existing ``data/`` (nothing to do when every file is there and intact);
2. ``../shared/data`` beside the clone (or ``--shared DIR``);
3. a DVC remote, if you track ``data/`` yourself (``dvc add data``, ``dvc push``): ``dvc pull data.dvc``;
4. the public upstream of each file, at a pinned revision (``url`` in the manifest).

Files are gathered in a staging folder (``.cache/blindmcq/data-staging``) and ``data/`` appears only
when every file is there and verified: never a half-filled ``data/``. A download is written to a
temporary file and kept only if its checksum matches. When nothing works (no network, say) it says which
sources it tried and that the default run needs only ``defaults/``, and exits 1: ``make data`` did not
fill ``data/``, so whatever depends on it (``make test-data``) stops there.

:func:`check` is the pipeline's first stage, ``inputs``: a config that names inputs under ``data/`` that
are absent stops there with one line saying ``make data``.

Why ``data/`` is not a DVC-tracked unit in the repository: DVC verifies a tracked ``data/`` before any
stage that reads a file in it and, when it is absent, stops with its own "missing data 'source'" before
this check can run; and a tracked ``data/`` shows as changed in every clone that has not fetched it. The
manifest's per-file sha256 records the inputs instead.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from blindmcq.atomic import atomic_path
from blindmcq.config.schema import Config, validate
from blindmcq.errors import InputError

MANIFEST = "data-sources.yaml"
DATA = "data"
STAGING = Path(".cache") / "blindmcq" / "data-staging"
DEFAULT_NOTE = "the default run needs only defaults/: make run works without data/"


@dataclass(frozen=True)
class Source:
    """One file of the full inputs: where it goes under data/ and how to check and get it."""

    path: str
    sha256: str
    size: int | None = None
    url: str | None = None
    repo_copy: str | None = None


def read_manifest(root: Path) -> list[Source]:
    path = root / MANIFEST
    try:
        files = yaml.safe_load(path.read_text(encoding="utf-8"))["files"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise InputError(f"cannot read the data manifest ({exc})", file=str(path)) from exc
    return [
        Source(name, str(f["sha256"]), f.get("size"), f.get("url"), f.get("repo_copy"))
        for name, f in files.items()
    ]


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def intact(path: Path, source: Source) -> bool:
    return path.is_file() and sha256(path) == source.sha256


def copy_verified(src: Path, dst: Path, source: Source) -> None:
    """Copy ``src`` to ``dst`` all-or-nothing; refuse a file whose checksum is not the manifest's."""
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)
        got = sha256(tmp)
        if got != source.sha256:
            raise InputError(f"sha256 {got} is not the expected {source.sha256}", file=str(src))


def download(url: str, dst: Path, source: Source, *, timeout: float = 20.0) -> None:
    """Download ``url`` to ``dst`` all-or-nothing, checking the sha256 (InputError naming the URL)."""
    with atomic_path(dst) as tmp:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise InputError(f"download failed ({exc})", file=url) from exc
        got = sha256(tmp)
        if got != source.sha256:
            raise InputError(
                f"checksum mismatch: sha256 {got}, expected {source.sha256} for {source.path}; "
                "nothing written",
                file=url,
            )


@dataclass
class Report:
    tried: list[str]
    missing: list[str]
    filled: bool


def fill(
    root: Path,
    *,
    shared: Path | None = None,
    dvc_pull: Callable[[Path], bool] | None = None,
    log: Callable[[str], None] = print,
) -> Report:
    """Fill ``root/data`` from the sources in order; ``data/`` appears only complete and verified."""
    sources = read_manifest(root)
    data = root / DATA
    tried: list[str] = []
    if data.is_dir():
        bad = [s.path for s in sources if not intact(data / s.path, s)]
        if not bad:
            log("data/ present, every file intact")
            return Report(["data/"], [], True)
        # a user's data/ is never overwritten: say what is wrong and stop
        log(f"data/ exists but these files are missing or differ from {MANIFEST}: {', '.join(bad)}")
        return Report(["data/"], bad, False)
    tried.append("data/ (absent)")
    staging = root / STAGING
    staging.mkdir(parents=True, exist_ok=True)

    def still_missing() -> list[Source]:
        return [s for s in sources if not intact(staging / s.path, s)]

    for s in still_missing():  # files the repository itself carries (the data README)
        if s.repo_copy and (root / s.repo_copy).is_file():
            _try(lambda s=s: copy_verified(root / s.repo_copy, staging / s.path, s), log)

    shared = shared if shared is not None else root.parent / "shared" / "data"
    if still_missing():
        if shared.is_dir():
            tried.append(str(shared))
            for s in still_missing():
                if (shared / s.path).is_file():
                    _try(lambda s=s: copy_verified(shared / s.path, staging / s.path, s), log)
        else:
            tried.append(f"{shared} (absent)")

    if still_missing():
        pull = dvc_pull or _dvc_pull
        if pull(root):
            tried.append("the DVC remote")
            if (root / DATA).is_dir():  # dvc pull writes data/ itself, whole and checked by DVC
                bad = [s.path for s in sources if not intact(data / s.path, s)]
                if not bad:
                    log("data/ pulled from the DVC remote")
                    return Report(tried, [], True)
        else:
            tried.append("a DVC remote (no data.dvc, no remote configured, or the pull failed)")

    if still_missing():
        tried.append("upstream downloads")
        for s in still_missing():
            if s.url:
                log(f"downloading {s.path} from {s.url}")
                _try(lambda s=s: download(s.url, staging / s.path, s), log)

    missing = [s.path for s in still_missing()]
    if missing:
        log(f"data/ not filled: still missing {', '.join(missing)}")
        log(f"tried: {'; '.join(tried)}")
        log(f"{DEFAULT_NOTE}; the verified files wait in {STAGING} for the next `make data`")
        return Report(tried, missing, False)
    staging.rename(data)  # one rename: data/ appears complete or not at all
    log(f"data/ filled and verified ({len(sources)} files) from: {'; '.join(tried)}")
    return Report(tried, [], True)


def _try(step: Callable[[], None], log: Callable[[str], None]) -> None:
    try:
        step()
    except InputError as exc:
        log(str(exc))


def _dvc_pull(root: Path) -> bool:
    """``dvc pull data.dvc`` when you track data/ in DVC and a remote is configured; else False."""
    if not (root / "data.dvc").is_file():
        return False
    dvc = shutil.which("dvc") or str(Path(sys.executable).with_name("dvc"))
    try:
        listed = [dvc, "remote", "list"]
        remotes = subprocess.run(listed, cwd=root, capture_output=True, text=True, check=False)
        if remotes.returncode != 0 or not remotes.stdout.strip():
            return False
        done = subprocess.run([dvc, "pull", "-q", "data.dvc"], cwd=root, check=False)
    except OSError:
        return False
    return done.returncode == 0


def _inputs(config: Config) -> dict[str, Any]:
    """The inputs a composed config names, by config key (``dataset.dep``, ``statutes.path``)."""
    return {
        "dataset.dep": config.dataset.dep if config.dataset else None,
        "statutes.path": config.statutes.path if config.statutes else None,
    }


def missing_inputs(config: Config, root: Path) -> list[tuple[str, str]]:
    """(config key, path) of each input under data/ that a composed config names and that is absent."""
    out = []
    for key, value in _inputs(config).items():
        if not value:
            continue
        path = Path(str(value))
        if path.parts[:1] == (DATA,) and not (root / path).exists():
            out.append((key, str(path)))
    return out


def check(root: Path, out: Path | None = None) -> int:
    """The pipeline's ``inputs`` stage: one line naming the first missing input and `make data`."""
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8")) or {}
    config = validate(params, file="params.yaml")
    missing = missing_inputs(config, root)
    if missing:
        key, path = missing[0]
        print(
            f"{key}: {path} not found: run `make data` to fetch the full inputs ({DEFAULT_NOTE})",
            file=sys.stderr,
        )  # one line, before DVC's own missing-dependency error
        return 2
    if out is not None:
        with atomic_path(out) as tmp:
            text = json.dumps(_inputs(config), indent=2, ensure_ascii=False) + "\n"
            tmp.write_text(text, encoding="utf-8")
    return 0
