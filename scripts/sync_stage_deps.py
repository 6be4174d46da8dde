"""Rewrite the code deps of every ``python -m blindmcq...`` stage in dvc.yaml from its real import closure,
keeping every other dep (data, ``${...}``, outputs of other stages), the order of those, and every comment.

    python scripts/sync_stage_deps.py [--check | --print]

A stage's code deps are, file by file (never widened to a package folder, so editing
``backends/local.py`` does not rerun the PDF extraction):

- every module of ``src/`` its command can load: each ``import``/``from ... import`` of ``blindmcq``
  anywhere in a module (inside functions too, so lazy imports count) and each string constant naming a
  ``blindmcq`` module (registries that ``importlib.import_module`` by name), followed transitively;
  importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too;
- the package data those modules read (``templates/`` beside the code);
- the ``conf/`` folders the closure reads at run time: a call of a ``config.files`` loader names its
  group (``load_label_schemes`` -> ``conf/labels``, ``load_group("intervention", ...)`` ->
  ``conf/intervention``); a loader whose groups are not literal, or a bare ``"conf"``, means all of ``conf``.

Code deps (``conf``, ``conf/...`` and ``src/...``) are replaced in place, where the first of them stood.
``--check`` changes nothing and exits 1 when dvc.yaml is out of date; ``--print`` lists each stage's deps.
``tests/pipeline/test_stage_deps.py`` loads this file and checks dvc.yaml against it.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
CONF_FILES = SRC / "blindmcq" / "config" / "files.py"  # defines the loaders; a call elsewhere is a read
MODULE = re.compile(r"^blindmcq(\.[A-Za-z_]\w*)*$")
STAGE = re.compile(r"^  (\S[^:]*):\s*$")
CMD = re.compile(r"^    cmd: python -m (blindmcq[\w.]*)(?:\s.*)?$")
DEP = re.compile(r"^      - (\S.*?)\s*$")
# config.files loaders -> the conf/ folder each reads; None: the group is the call's first argument
LOADERS: dict[str, str | None] = {
    "load_label_schemes": "conf/labels",
    "load_models": "conf/model",
    "load_model_file": "conf/model",
    "load_group": None,
    "read_group": None,
    "load_groups": "conf",
    "group_names": "conf",
    "hydra_conf_dir": "conf",
    "intervention_group": "conf/intervention",
    "default_choices": "conf",
}
DATA_FOLDERS = ("templates",)


def module_file(name: str) -> Path | None:
    """The source file of module ``name`` (a package's ``__init__.py``), or None outside ``src/``."""
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    return ".".join(rel.parts[:-1])


def _called(node: ast.Call) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _conf_read(node: ast.AST) -> str | None:
    """The conf/ folder ``node`` reads at run time, if it is a loader call or names conf/ itself."""
    if isinstance(node, ast.Call) and (name := _called(node)) in LOADERS:
        folder = LOADERS[name]
        if folder is not None:
            return folder
        first = node.args[0] if node.args else None
        literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
        return f"conf/{first.value}" if literal else "conf"  # type: ignore[union-attr]
    if isinstance(node, ast.Name | ast.Attribute) and (getattr(node, "id", None) or node.attr) == "CONF_DIR":
        return "conf"
    if isinstance(node, ast.Constant) and node.value == "conf":  # Path(...) / "conf"
        return "conf"
    return None


@cache
def direct_imports(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(the ``blindmcq`` modules named in the file, the conf/ folders it reads at run time)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    conf: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = _package_of(path).split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE.match(node.value):
            names.add(node.value)
        if path != CONF_FILES and (folder := _conf_read(node)):
            conf.add(folder)
    wanted = frozenset(n for n in names if n == "blindmcq" or n.startswith("blindmcq."))
    return wanted, frozenset(conf)


def closure(module: str) -> tuple[set[Path], set[str]]:
    """Every source file importing ``module`` can load (packages' __init__ included), and the conf/
    folders they read."""
    seen: set[Path] = set()
    conf: set[str] = set()
    todo = [module]
    while todo:
        parts = todo.pop().split(".")
        # importing a.b.c runs a/__init__, a/b/__init__ and a/b/c
        for i in range(1, len(parts) + 1):
            path = module_file(".".join(parts[:i]))
            if path is None or path in seen:
                continue
            seen.add(path)
            names, reads = direct_imports(path)
            conf |= reads
            todo.extend(names)
    return seen, conf


def data_files(files: set[Path]) -> set[Path]:
    """Package data the closure's modules read (templates beside the code)."""
    extra: set[Path] = set()
    for f in files:
        for sub in DATA_FOLDERS:
            if f'"{sub}"' in f.read_text(encoding="utf-8") and (f.parent / sub).is_dir():
                extra.update(p for p in (f.parent / sub).rglob("*") if p.is_file())
    return extra


def code_deps(module: str) -> list[str]:
    """The code deps of a stage running ``python -m module``: its conf/ folders (all of ``conf`` covers
    the rest), then every file of its closure, each sorted."""
    files, conf = closure(module)
    files |= data_files(files)
    folders = ["conf"] if "conf" in conf else sorted(conf)
    return folders + sorted(f.relative_to(ROOT).as_posix() for f in files)


def is_code(dep: str) -> bool:
    return dep == "conf" or dep.startswith(("conf/", "src/"))


def sync(text: str, deps_of: Callable[[str], list[str]] = code_deps) -> str:
    """dvc.yaml's text with each ``python -m blindmcq...`` stage's code deps replaced by ``deps_of``."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    module: str | None = None
    in_deps = False
    placed = False
    for line in lines:
        if STAGE.match(line):
            module, in_deps, placed = None, False, False
        cmd = CMD.match(line)
        if cmd:
            module = cmd.group(1)
        if line.startswith("    deps:"):
            in_deps, placed = True, False
            out.append(line)
            continue
        if in_deps:
            dep = DEP.match(line)
            if dep is None and not line.startswith("      #"):
                in_deps = False
            elif dep is not None and is_code(dep.group(1)) and module is not None:
                if not placed:
                    out.extend(f"      - {d}\n" for d in deps_of(module))
                    placed = True
                continue
        out.append(line)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 when dvc.yaml is out of date")
    mode.add_argument("--print", action="store_true", help="print each stage's code deps")
    args = parser.parse_args(argv)
    path = ROOT / "dvc.yaml"
    before = path.read_text(encoding="utf-8")
    if args.print:
        for line in before.splitlines():
            stage, cmd = STAGE.match(line), CMD.match(line)
            if stage:
                print(f"{stage.group(1)}:")
            elif cmd:
                print(*(f"  - {d}" for d in code_deps(cmd.group(1))), sep="\n")
        return 0
    after = sync(before)
    if args.check:
        return int(after != before)
    if after != before:
        path.write_text(after, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
