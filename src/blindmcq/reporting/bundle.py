"""A release folder: what the analysis and the report need from a run, readable without DVC or a model.

The folder keeps the project's own paths (``results/predictions/predictions.parquet`` in the released
predictions format, ``results/corpus/items.jsonl``, the gate, the baselines, the interventions' figures,
the run's ``params.yaml``) and a manifest, ``release.json``, with the md5 and size of every file, the
commit it came from and the md5 of each DVC output in that commit's ``dvc.lock`` (so a reader can match it
to a tag). ``reports/metrics.json`` rides along as the reference the rebuilt report is compared with.

    blindmcq report --from RELEASE_DIR [--out DIR]     tables, figures, report.md, HTML; no model
    blindmcq report --export RELEASE_DIR [-C DIR]      write the release folder of this run's outputs

``--from`` checks every file against the manifest first (a changed file is refused and named), copies the
folder into a scratch workspace and runs the ``analyze`` and ``report`` code there: every table and figure
is rebuilt from the predictions; nothing is asked of any model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from blindmcq.config.schema import Analysis, Config, validate
from blindmcq.errors import BlindMCQError

log = logging.getLogger(__name__)

FORMAT = "blindmcq-release"
VERSION = 1
MANIFEST = "release.json"
# What the analyze and report code read (stages/analyze.py, reporting/markdown.py, reporting/html.py).
REQUIRED = (
    "params.yaml",
    "results/corpus/items.jsonl",
    "results/corpus/verification.json",
    "results/baselines/picks.parquet",
    "results/baselines/lexical.parquet",
    "results/baselines/summary.csv",
    "results/baselines/facts.json",
    "results/predictions/predictions.parquet",
    "results/predictions/models.json",
    "results/gate/gate.json",
)
OPTIONAL = (
    "results/gate/predictions.parquet",  # a separate gate model's calls, when it is not in the panel
    "results/interventions/rewrite/metrics.json",
    "results/interventions/rewrite/comparison.md",
    "results/interventions/answerpool/metrics.json",
    "results/interventions/answerpool/comparison.md",
    "reports/metrics.json",  # the released run's own metrics: what the rebuilt report is compared with
)
REFERENCE = "reports/metrics.json"


class BundleError(BlindMCQError):
    """A release folder is incomplete, changed or of an unknown format; the message names the file."""


def md5_file(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _commit(root: Path) -> str | None:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or None if done.returncode == 0 else None


def export_bundle(root: str | Path, out: str | Path) -> dict[str, Any]:
    """Copy this run's files the report needs from ``root`` into ``out`` and write the manifest."""
    from blindmcq.reporting.release import locked_outputs

    root, out = Path(root), Path(out)
    missing = [rel for rel in REQUIRED if not (root / rel).is_file()]
    if not missing:
        check_self_contained(
            yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8")), root / "params.yaml"
        )
    if missing:
        raise BundleError(f"{root / missing[0]}: not found; run `dvc repro` (or `dvc pull`) first")
    files: dict[str, dict[str, Any]] = {}
    for rel in (*REQUIRED, *OPTIONAL):
        src = root / rel
        if not src.is_file():
            continue
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        files[rel] = {"md5": md5_file(dst), "bytes": dst.stat().st_size}
    locked = locked_outputs(root)
    for rel, info in files.items():  # a file that is itself a DVC output must be the one dvc.lock pins
        if rel in locked and locked[rel] != info["md5"]:
            raise BundleError(
                f"{root / rel}: not the output dvc.lock pins; run `dvc repro` (or `dvc pull`) first"
            )
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "commit": _commit(root),
        "dvc_outputs": locked,
        "files": files,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise BundleError(f"{path}: not found; a release folder has a {MANIFEST} (blindmcq report --export)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{path}: format is not {FORMAT!r}")
    if manifest.get("version") != VERSION:
        raise BundleError(
            f"{path}: version {manifest.get('version')!r} unknown (this blindmcq reads {VERSION})"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or any(rel not in files for rel in REQUIRED):
        absent = next(rel for rel in REQUIRED if not isinstance(files, dict) or rel not in files)
        raise BundleError(f"{path}: files lists no {absent!r}")
    return manifest


def verify_bundle(folder: str | Path) -> dict[str, Any]:
    """The manifest, after every listed file was found with its md5 and size; else a BundleError naming it."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    for rel, want in sorted(manifest["files"].items()):
        path = folder / rel
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise BundleError(f"{folder / MANIFEST}: file path {rel!r} leaves the release folder")
        if not path.is_file():
            raise BundleError(f"{path}: listed in {MANIFEST} but missing")
        got = md5_file(path)
        if got != want.get("md5"):
            raise BundleError(
                f"{path}: md5 {got} but {MANIFEST} says {want.get('md5')}: changed after the release; refused"
            )
    return manifest


def check_self_contained(params: Config | Mapping[str, Any], where: Path) -> None:
    """Refuse a run whose analysis read predictions from outside the project (not in a release folder).
    ``params``: the typed :class:`Config`, or ``params.yaml`` as read (checked here)."""
    analysis = validate(params, file=str(where)).analysis or Analysis()
    if analysis.extra_predictions:
        raise BundleError(f"{where}: analysis.extra_predictions names files a release folder does not carry")
    if analysis.second_bank.get("predictions"):
        raise BundleError(f"{where}: analysis.second_bank names files a release folder does not carry")


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    # the stages read cwd-relative paths (blindmcq.paths); the workspace stands in for a project root
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def report_from_bundle(folder: str | Path, out: str | Path) -> dict[str, Any]:
    """Rebuild the analysis and the report of a release folder into ``out``; no model is called.

    Returns ``{"metrics": ..., "same_as_release": bool | None}`` (None when the release has no reference).
    """
    from blindmcq import paths
    from blindmcq.params import PARAMS_FILE, load_params
    from blindmcq.reporting.html import write_html_report
    from blindmcq.reporting.markdown import build_report
    from blindmcq.secrets import scrub
    from blindmcq.stages.analyze import run_analysis

    folder, out = Path(folder).resolve(), Path(out).resolve()
    manifest = verify_bundle(folder)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="blindmcq-release-") as tmp:
        work = Path(tmp)
        for rel in manifest["files"]:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, work / rel)
        with _cwd(work):
            params = load_params(PARAMS_FILE)
            check_self_contained(params, folder / PARAMS_FILE)
            run_analysis(params)
            metrics = build_report(
                corpus_dir=paths.CORPUS_DIR,
                baselines_dir=paths.BASELINES_DIR,
                analysis_dir=paths.ANALYSIS_DIR,
                out_dir=out,
                config=scrub(params),
            )
            gate_predictions = paths.GATE_DIR / "predictions.parquet"
            write_html_report(
                out / "html",
                items_path=paths.ITEMS,
                predictions_path=[
                    paths.PREDICTIONS,
                    *([gate_predictions] if gate_predictions.exists() else []),
                ],
                gate_path=paths.GATE_DIR / "gate.json",
                baselines_dir=paths.BASELINES_DIR,
                analysis_dir=paths.ANALYSIS_DIR,
            )
    same = None
    if REFERENCE in manifest["files"]:
        same = (out / "metrics.json").read_bytes() == (folder / REFERENCE).read_bytes()
    return {"metrics": metrics, "same_as_release": same, "commit": manifest.get("commit")}
