"""Every third-party package that ``src/blindmcq`` imports is one a user's install brings: a project
dependency or what one of them requires, or an optional extra named for the feature (``harnesses``),
never only the ``dev`` extra, which a user who installs the package does not get. An import guarded by
``except ImportError`` (a feature that says what to install) is left out."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from source_trees import parse_source, walk

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "blindmcq"


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _guarded(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside a ``try`` that catches ImportError (or ModuleNotFoundError)."""
    out: set[int] = set()
    for node in walk(tree):
        if isinstance(node, ast.Try) and any(
            h.type is not None
            and {"ImportError", "ModuleNotFoundError"}
            & {n.id for n in walk(h.type) if isinstance(n, ast.Name)}
            for h in node.handlers
        ):
            out |= {id(n) for stmt in node.body for n in walk(stmt)}
    return out


def _closure(names: set[str]) -> set[str]:
    """``names`` and every distribution they require, installed ones only, extras' requirements left out."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = requires(name) or []
        except PackageNotFoundError:
            continue
        todo.extend(_name(r) for r in reqs if "extra ==" not in r)
    return seen


def imported_modules() -> dict[str, str]:
    """Top-level module -> the first ``file:line`` importing it unguarded, over the package's modules."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = parse_source(path.read_text(encoding="utf-8"))
        guarded = _guarded(tree)
        for node in walk(tree):
            if id(node) in guarded:
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_imported_package_is_installed_for_a_user() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    allowed = {_name(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra != "dev":
            allowed |= {_name(r) for r in requirements}
    allowed = _closure(allowed)
    dists = packages_distributions()
    missing = []
    for module, where in imported_modules().items():
        if module == "blindmcq" or module in sys.stdlib_module_names:
            continue
        names = {d.lower().replace("_", "-") for d in dists.get(module, [])} or {module.replace("_", "-")}
        if not names & allowed:
            missing.append(f"{module} ({where}; distributions {sorted(names) or 'none installed'})")
    assert not missing, "imported by the package but not in its dependencies: " + ", ".join(missing)


def test_the_import_scan_sees_function_level_imports() -> None:
    found = imported_modules()
    assert "statsmodels" in found and "verdict.py" in found["statsmodels"]
    assert "torch" in found and "pymorphy3" in found
    assert "sentence_transformers" not in found  # guarded: a clear error names what to install


def test_the_dev_extra_alone_does_not_count() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dev_only = {_name(r) for r in project["optional-dependencies"]["dev"]} - _closure(
        {_name(r) for r in project["dependencies"]}
    )
    assert {"pytest", "hypothesis"} <= dev_only
