"""Regroup blindmcq's modules into packages named for what flows through them (issue #19).

    python scripts/regroup.py [--dry-run]

For every ``old -> new`` pair of ``MOVES`` whose old file still exists, ``git mv`` it (creating the new
package with a docstring where it has none); then rewrite every reference to an old module, in any
text file of src/, tests/, benchmarks/, scripts/, docs/, conf/ and README.md, dvc.yaml, Makefile,
pyproject.toml: dotted names (imports, ``python -m``, ``mock.patch`` strings, logger names, entry
points) and file paths (``src/blindmcq/x.py``, ``blindmcq/x.py``). The rewrite goes by pattern, not by a
list of files, so a tree with files this script has not seen is rewritten too. Last, the code deps of
the DVC stages are regenerated (scripts/sync_stage_deps.py).

Idempotent: a second run finds no old file and no old name (no new name contains an old one), and
changes nothing. ``MOVES`` also maps the moves made by hand earlier in the same issue (the engine and
the tasks), so code written against the old names on another branch is rewritten as well.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "blindmcq"

# old module -> new module (dotted, under blindmcq). No new name may start with an old name + ".".
MOVES: dict[str, str] = {
    # the engine: requests in, responses out, and the ways to pay for them
    "cache": "engine.cache",
    "batch": "engine.batch",
    "batch_cli": "tasks.batch",  # engine/ first (issue #19), tasks/ since issue #31: they run the probe
    "capacity": "tasks.capacity",
    # the tasks: items -> requests -> answers (the probe, its presenter and parser; the interventions)
    "runner": "tasks.probe",  # split by hand: Job, run_calls, make_record, call_counts live there
    "probe": "tasks.probe",
    "presentations": "tasks.presentations",
    "parsing": "tasks.parsing",
    "preview": "tasks.preview",
    "interventions.rewrite": "tasks.rewrite",
    "interventions.answerpool": "tasks.answerpool",
    "protocols.nonsense_run": "tasks.nonsense",
    "stages._baseline": "tasks.from_params",
    # the answers: the per-call record and the predictions files
    "records": "answers.records",
    "predictions": "answers.predictions",
    # the items and where the inputs come from
    "items": "datasets.items",
    "fetch": "datasets.fetch",
    # what a bank gives away, judged without a model or before the probe
    "audit": "auditing.audit",
    "profile": "auditing.profile",
    "baselines": "auditing.surface",  # the surface strategies (not answers.predictions.Baseline)
    # what leaves a run: the report, its HTML, MLflow, the release
    "report": "reporting.markdown",
    "html_report": "reporting.html",
    "tracking": "reporting.tracking",
    "release": "reporting.release",
    # issue #31: the engine imports no task; the statistics are a leaf every layer may use
    "engine.batch_cli": "tasks.batch",
    "engine.capacity": "tasks.capacity",
    "analysis.stats": "stats",
}

# package data that moves with the module reading it: old folder -> new folder (under src/blindmcq)
DIR_MOVES: dict[str, str] = {"templates": "reporting/templates"}
# literal rewrites that go with DIR_MOVES (the reader names its package)
LITERALS: dict[str, str] = {
    'resources.files("blindmcq").joinpath("templates"': (
        'resources.files("blindmcq.reporting").joinpath("templates"'
    ),
    "src/blindmcq/templates": "src/blindmcq/reporting/templates",
}

PACKAGE_DOCS = {
    "engine": "The engine: requests in, full responses out, through the response cache.",
    "tasks": "Tasks: each a dataset, a presenter, a parser and a scorer, run through the engine.",
    "answers": "The answers of a run: one PredictionRecord per model call, and the predictions files.",
    "datasets": "Item banks: the item record, the loaders, and the inputs under data/.",
    "auditing": "What a bank gives away without its questions: the audit, the format profile, surface "
    "strategies.",
    "reporting": "What leaves a run: the Markdown and HTML report, MLflow tracking and the release.",
}

TEXT_DIRS = ("src", "tests", "benchmarks", "scripts", "docs", "conf")
TEXT_FILES = ("README.md", "dvc.yaml", "Makefile", "pyproject.toml")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini", ".sh", ".html", ".js", ".rst"}
SKIP = {Path(__file__).resolve()}


def _check_moves() -> None:
    for old, new in MOVES.items():
        for other in MOVES:
            if new.startswith(other + "."):
                sys.exit(f"regroup: new name {new} starts with old name {other}: not idempotent")
        if old == new:
            sys.exit(f"regroup: {old} maps to itself")


def _file(module: str) -> Path:
    return PACKAGE.joinpath(*module.split(".")).with_suffix(".py")


def _dotted(old: str) -> re.Pattern[str]:
    # blindmcq.<old> as a whole dotted name: not inside a longer name on either side
    return re.compile(r"(?<![\w.])blindmcq\." + re.escape(old) + r"(?![\w])")


def _path(old: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])blindmcq/" + re.escape(old.replace(".", "/")) + r"\.py(?![\w])")


PATTERNS = [
    (_dotted(old), "blindmcq." + new, _path(old), "blindmcq/" + new.replace(".", "/") + ".py")
    for old, new in MOVES.items()
]


def rewrite(text: str) -> str:
    for old, new in LITERALS.items():
        text = re.sub(re.escape(old) + r"(?![\w/])", new.replace("\\", "\\\\"), text)
    # longer old names first, so "interventions.rewrite" is not seen as "interventions" + ".rewrite"
    for dotted, new_dotted, path, new_path in sorted(PATTERNS, key=lambda p: -len(p[0].pattern)):
        text = dotted.sub(new_dotted, text)
        text = path.sub(new_path, text)
    return text


def _git(*args: str, dry: bool) -> None:
    print("git", *args)
    if not dry:
        subprocess.run(["git", *args], cwd=ROOT, check=True)


def move_files(dry: bool) -> int:
    moved = 0
    for old, new in MOVES.items():
        src, dst = _file(old), _file(new)
        if not src.is_file():
            continue
        if dst.exists():
            both = f"{src.relative_to(ROOT)} and {dst.relative_to(ROOT)}"
            sys.exit(f"regroup: both {both} exist; merge them by hand")
        package = dst.parent
        for level in [package, *package.parents]:
            if level == PACKAGE or PACKAGE not in level.parents:
                break
            init = level / "__init__.py"
            if not init.exists():
                doc = PACKAGE_DOCS.get(level.name, f"The {level.name} package.")
                print(f"create {init.relative_to(ROOT)}")
                if not dry:
                    level.mkdir(parents=True, exist_ok=True)
                    init.write_text(f'"""{doc}"""\n', encoding="utf-8")
                    _git("add", str(init.relative_to(ROOT)), dry=dry)
        _git("mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT)), dry=dry)
        moved += 1
    for old, new in DIR_MOVES.items():
        src, dst = PACKAGE / old, PACKAGE / new
        if src.is_dir() and not dst.exists():
            _git("mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT)), dry=dry)
            moved += 1
    return moved


def text_files() -> list[Path]:
    files = [ROOT / f for f in TEXT_FILES if (ROOT / f).is_file()]
    for folder in TEXT_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if any(part in {"__pycache__", ".git", "node_modules"} for part in path.parts):
                continue
            if path.is_file() and path.suffix in SUFFIXES and path.resolve() not in SKIP:
                files.append(path)
    return files


def rewrite_files(dry: bool) -> list[Path]:
    changed: list[Path] = []
    for path in text_files():
        try:
            before = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        after = rewrite(before)
        if after != before:
            changed.append(path)
            print(f"rewrite {path.relative_to(ROOT)}")
            if not dry:
                path.write_text(after, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="say what would change; change nothing")
    args = parser.parse_args(argv)
    _check_moves()
    moved = move_files(args.dry_run)
    changed = rewrite_files(args.dry_run)
    python = [str(p) for p in changed if p.suffix == ".py"]
    if python and not args.dry_run and shutil.which("ruff"):
        # a renamed import may now sort elsewhere in its block: only the import order is touched
        subprocess.run(["ruff", "check", "--fix", "--select", "I001", "--quiet", *python], cwd=ROOT)
    if not args.dry_run:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_stage_deps.py")], cwd=ROOT, check=True)
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    print(f"moved {moved} modules, rewrote {len(changed)} files")
    print(f"{len(top)} modules under src/blindmcq/:", " ".join(top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
