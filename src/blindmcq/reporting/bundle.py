"""A release folder: what the analysis and the report need from a run, readable without DVC or a model.

The folder keeps the project's own paths (``results/predictions/predictions.parquet`` in the released
predictions format, ``results/corpus/items.jsonl``, the gate, the baselines, the interventions' figures,
the run's ``params.yaml``) and a manifest, ``release.json``, with the md5 and size of every file, the
commit it came from and the md5 of each DVC output in that commit's ``dvc.lock`` (so a reader can match it
to a tag). ``reports/metrics.json`` rides along as the reference the rebuilt report is compared with.

    blindmcq report --from RELEASE_DIR [--out DIR]     tables, figures, report.md, HTML; no model
    blindmcq report --export RELEASE_DIR [-C DIR]      write the release folder of this run's outputs

``--from`` checks the folder first: no symlink in it, only the files a release carries, each with the md5
its manifest lists, and each the one the release's commit pins in the git clone ``-C`` names (a file
output of that commit's ``dvc.lock``, a file in one of its directory outputs, whose ``.dir`` listing the
manifest carries as ``dvc_listings`` and whose bytes hash to the md5 the commit pins, or a file git tracks
at that commit). Then it copies the folder into a scratch workspace and runs the ``analyze`` and
``report`` code there: every table and figure is rebuilt from the predictions; nothing is asked of any
model. The report is written to ``--out`` only once it is complete.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from blindmcq.atomic import replace_tree, write_bytes
from blindmcq.config.schema import Analysis, Config, validate
from blindmcq.errors import BlindMCQError
from blindmcq.reporting.confine import GIT_COMMIT, is_md5, md5_bytes, md5_file, parse_listing, path_problem

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


def _commit(root: Path) -> str | None:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or None if done.returncode == 0 else None


def dir_listing(folder: Path) -> bytes:
    """The bytes of DVC's ``.dir`` listing of ``folder`` (what its md5 in ``dvc.lock`` hashes)."""
    rows = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise BundleError(f"{path}: a symlink inside a DVC output; refused")
        if path.is_file():
            rows.append({"md5": md5_file(path), "relpath": path.relative_to(folder).as_posix()})
    return json.dumps(sorted(rows, key=lambda r: r["relpath"]), sort_keys=True).encode("utf-8")


def _holder(rel: str, outputs: Mapping[str, str]) -> str | None:
    """The directory output ``rel`` lies in, if any."""
    return next((d for d, md5 in outputs.items() if md5.endswith(".dir") and rel.startswith(d + "/")), None)


def export_bundle(root: str | Path, out: str | Path) -> dict[str, Any]:
    """Copy this run's files the report needs from ``root`` into ``out`` and write the manifest."""
    from blindmcq.reporting.release import locked_outputs

    root, out = Path(root), Path(out)
    missing = [rel for rel in REQUIRED if not (root / rel).is_file()]
    if not missing:
        written = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
        check_self_contained(validate(written, file=str(root / "params.yaml")), root / "params.yaml")
    if missing:
        raise BundleError(f"{root / missing[0]}: not found; run `dvc repro` (or `dvc pull`) first")
    files = {
        rel: {"md5": md5_file(root / rel), "bytes": (root / rel).stat().st_size}
        for rel in (*REQUIRED, *OPTIONAL)
        if (root / rel).is_file()
    }
    locked = locked_outputs(root)
    listings: dict[str, str] = {}
    for rel, info in files.items():  # a file that is a DVC output, or in one, must be what dvc.lock pins
        holder = _holder(rel, locked)
        if holder is not None and holder not in listings:
            data = dir_listing(root / holder)
            if md5_bytes(data) == locked[holder].removesuffix(".dir"):
                listings[holder] = data.decode("utf-8")
        pinned = locked[rel] == info["md5"] if rel in locked else True
        if holder is not None:
            listed = parse_listing(listings[holder].encode(), locked[holder]) if holder in listings else []
            pinned = (rel[len(holder) + 1 :], info["md5"]) in listed
        if not pinned:
            raise BundleError(
                f"{root / rel}: not the output dvc.lock pins; run `dvc repro` (or `dvc pull`) first"
            )
    for rel in files:  # checked: now copied
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, out / rel)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "commit": _commit(root),
        "dvc_outputs": locked,
        "dvc_listings": listings,
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
    for rel, want in sorted(files.items()):
        why = path_problem(rel)
        if why or Path(rel).is_absolute():
            raise BundleError(f"{path}: file path {rel!r} leaves the release folder")
        if rel not in (*REQUIRED, *OPTIONAL):
            raise BundleError(f"{path}: file path {rel!r} is not one a release carries")
        if not isinstance(want, dict) or not is_md5(want.get("md5")):
            raise BundleError(f"{path}: files[{rel!r}] has no md5")
    for key in ("dvc_outputs", "dvc_listings"):
        if not isinstance(manifest.get(key, {}), dict):
            raise BundleError(f"{path}: {key} is not a mapping")
    return manifest


def check_no_links(folder: Path) -> None:
    """Refuse a release folder holding a symlink or anything but files and folders (the manifest too)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                raise BundleError(f"{path}: a symlink in the release folder; a release carries none, refused")
            if not (path.is_dir() or path.is_file()):
                raise BundleError(f"{path}: not a file or folder; refused")


def verify_bundle(folder: str | Path) -> dict[str, Any]:
    """The manifest, after every listed file was found with its md5 and size; else a BundleError naming it.

    Checks the folder against its own manifest only; :func:`check_commit` checks it against the commit."""
    folder = Path(folder)
    if (folder / MANIFEST).is_symlink():
        raise BundleError(f"{folder / MANIFEST}: a symlink; a release carries none, refused")
    manifest = read_manifest(folder)
    check_no_links(folder)
    for rel, want in sorted(manifest["files"].items()):
        path = folder / rel
        if not path.is_file():
            raise BundleError(f"{path}: listed in {MANIFEST} but missing")
        got = md5_file(path)
        if got != want.get("md5"):
            raise BundleError(
                f"{path}: md5 {got} but {MANIFEST} says {want.get('md5')}: changed after the release; refused"
            )
    return manifest


def _git(root: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def check_commit(folder: Path, manifest: Mapping[str, Any], project: str | Path) -> str:
    """Check each file of a verified release folder against what its commit pins; return the commit.

    The commit is looked up in the git clone ``project`` (never one inside the release folder): its
    ``dvc.lock`` must pin the manifest's ``dvc_outputs``, and each file must be a file output it pins, a
    file of a directory output whose listing (from the manifest, hashed to the pinned md5) names it with
    its md5, or a file git tracks at that commit with the same bytes. Else a BundleError naming the file.
    """
    from blindmcq.reporting.release import ReleaseError, committed_outputs

    folder = Path(folder).resolve()
    where = folder / MANIFEST
    commit = manifest.get("commit")
    if not isinstance(commit, str) or not GIT_COMMIT.fullmatch(commit):
        raise BundleError(f"{where}: commit {commit!r} is not a git commit; the release cannot be checked")
    top = _git(Path(project), "rev-parse", "--show-toplevel")
    if top is None:
        raise BundleError(
            f"{Path(project).resolve()}: not a git clone of the project; the release's commit {commit[:12]} "
            "pins its files there (give the clone with -C)"
        )
    clone = Path(top.decode().strip()).resolve()
    if clone == folder or folder in clone.parents:
        raise BundleError(f"{clone}: a git repository inside the release folder; give your own clone with -C")
    if _git(clone, "cat-file", "-e", f"{commit}^{{commit}}") is None:
        raise BundleError(
            f"{where}: commit {commit[:12]} is not in the clone {clone}; `git fetch` it (or give -C a clone "
            "that has it) so the release can be checked against what it pins"
        )
    try:
        pinned = committed_outputs(clone, commit)
    except (ReleaseError, yaml.YAMLError, AttributeError, KeyError, TypeError) as exc:
        raise BundleError(f"{clone}: dvc.lock at {commit[:12]} could not be read ({exc})") from exc
    claimed = manifest.get("dvc_outputs", {})
    for path in sorted(set(pinned) | set(claimed)):
        if pinned.get(path) != claimed.get(path):
            raise BundleError(
                f"{where}: dvc_outputs[{path!r}] is {claimed.get(path)!r} but commit {commit[:12]} pins "
                f"{pinned.get(path)!r}; refused"
            )
    listings: dict[str, set[tuple[str, str]]] = {}
    for rel, want in sorted(manifest["files"].items()):
        md5, path = want["md5"], folder / rel
        holder = _holder(rel, pinned)
        if rel in pinned:
            ok = pinned[rel] == md5
        elif holder is not None:
            if holder not in listings:
                text = manifest.get("dvc_listings", {}).get(holder)
                if not isinstance(text, str):
                    raise BundleError(
                        f"{path}: in DVC output {holder}, whose listing {MANIFEST} does not carry "
                        "(dvc_listings); re-export the release with this blindmcq"
                    )
                try:
                    listings[holder] = set(parse_listing(text.encode("utf-8"), pinned[holder]))
                except ValueError as exc:
                    raise BundleError(
                        f"{where}: dvc_listings[{holder!r}] is not the listing commit {commit[:12]} pins "
                        f"({exc}); refused"
                    ) from exc
            ok = (rel[len(holder) + 1 :], md5) in listings[holder]
        else:
            blob = _git(clone, "cat-file", "blob", f"{commit}:{rel}")
            if blob is None:
                raise BundleError(
                    f"{path}: not pinned by commit {commit[:12]} (no DVC output and not tracked); refused"
                )
            ok = md5_bytes(blob) == md5
        if not ok:
            raise BundleError(
                f"{path}: md5 {md5} is not what commit {commit[:12]} pins for {rel}: swapped after the "
                "release; refused"
            )
    return commit


def check_out(out: Path, folder: Path) -> None:
    """Refuse a report folder that is a file, lies in the release folder or cannot be written."""
    if out.exists() and not out.is_dir():
        raise BundleError(f"{out}: exists and is not a folder; give --out a new or report folder")
    if out == folder or folder in out.parents:
        raise BundleError(f"{out}: inside the release folder {folder}; give --out a folder outside it")
    ancestor = next(p for p in (out, *out.parents) if p.exists())
    if not ancestor.is_dir():
        raise BundleError(f"{out}: {ancestor} is not a folder")
    try:
        Path(tempfile.mkdtemp(prefix=".blindmcq-probe-", dir=ancestor)).rmdir()
    except OSError as exc:
        raise BundleError(f"{out}: cannot write in {ancestor} ({exc.strerror or exc})") from exc


def check_self_contained(config: Config, where: Path) -> None:
    """Refuse a run whose analysis read predictions from outside the project (not in a release folder):
    ``config`` is the typed composed config read from ``where``."""
    analysis = config.analysis or Analysis()
    if analysis.extra_predictions:
        raise BundleError(f"{where}: analysis.extra_predictions names files a release folder does not carry")
    if analysis.second_bank.predictions:
        raise BundleError(f"{where}: analysis.second_bank names files a release folder does not carry")


def report_from_bundle(folder: str | Path, out: str | Path, project: str | Path = ".") -> dict[str, Any]:
    """Rebuild the analysis and the report of a release folder into ``out``; no model is called.

    Everything is checked before anything is written: ``out`` (:func:`check_out`), the folder against its
    manifest (:func:`verify_bundle`) and against its commit in the git clone ``project``
    (:func:`check_commit`).

    Returns ``{"metrics": ..., "same_as_release": bool | None}`` (None when the release has no reference).
    """
    from blindmcq import paths
    from blindmcq.analysis.outputs import run_analysis
    from blindmcq.params import PARAMS_FILE, load_params
    from blindmcq.reporting.html import report_from_results
    from blindmcq.reporting.markdown import build_report

    folder, out = Path(folder).resolve(), Path(out).resolve()
    check_out(out, folder)
    manifest = verify_bundle(folder)
    commit = check_commit(folder, manifest, project)
    with tempfile.TemporaryDirectory(prefix="blindmcq-release-") as tmp:
        work, built = Path(tmp) / "release", Path(tmp) / "report"
        for rel in manifest["files"]:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, work / rel)
        config = load_params(work / PARAMS_FILE)
        check_self_contained(config, folder / PARAMS_FILE)
        run_analysis(config, root=work)
        metrics = build_report(
            corpus_dir=work / paths.CORPUS_DIR,
            baselines_dir=work / paths.BASELINES_DIR,
            analysis_dir=work / paths.ANALYSIS_DIR,
            out_dir=built,
            config=config,
            interventions_dir=work / paths.RESULTS / "interventions",
        )
        report_from_results(built / "html", root=work)  # the pipeline's own page, its conclusions included
        for part in sorted(built.iterdir()):  # the report is complete: now it goes to ``out``
            if part.is_dir():
                replace_tree(part, out / part.name)
            else:
                write_bytes(out / part.name, part.read_bytes())
    same = None
    if REFERENCE in manifest["files"]:
        same = (out / "metrics.json").read_bytes() == (folder / REFERENCE).read_bytes()
    return {"metrics": metrics, "same_as_release": same, "commit": commit}
