"""DVC deps that cannot go stale: each stage depends on every file of src/ its command can import.

The import closure is static: every ``import``/``from ... import`` of ``blindmcq`` anywhere in a module
(inside functions too, so lazy imports count) and every string constant naming a ``blindmcq`` module
(registries that ``importlib.import_module`` by name), followed transitively from the stage's
``python -m`` module. A stage whose closure reads ``conf/`` at run time must depend on ``conf``.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
MODULE = re.compile(r"^blindmcq(\.[A-Za-z_]\w*)*$")
COMMAND = re.compile(r"python -m (blindmcq(?:\.\w+)+)(?:\s.*)?")


def module_file(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def package_of(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1])


@cache
def direct_imports(path: Path) -> tuple[frozenset[str], bool]:
    """(blindmcq modules named in the file, whether it reads conf/ at run time)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    reads_conf = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = package_of(path).split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if MODULE.match(node.value):
                names.add(node.value)
            reads_conf |= node.value == "conf"  # Path(...) / "conf": a conf/ file read at run time
    wanted = frozenset(n for n in names if n == "blindmcq" or n.startswith("blindmcq."))
    return wanted, reads_conf


def closure(module: str) -> tuple[set[Path], bool]:
    """Every source file importing ``module`` can load (packages' __init__ included), and whether any of
    them reads conf/."""
    seen: set[Path] = set()
    todo = [module]
    reads_conf = False
    while todo:
        name = todo.pop()
        parts = name.split(".")
        # importing a.b.c runs a/__init__, a/b/__init__ and a/b/c
        for i in range(1, len(parts) + 1):
            path = module_file(".".join(parts[:i]))
            if path is None or path in seen:
                continue
            seen.add(path)
            names, conf = direct_imports(path)
            reads_conf |= conf
            todo.extend(names)
    return seen, reads_conf


def data_files(files: set[Path]) -> set[Path]:
    """Package data the closure's modules read (templates, YAML beside the code)."""
    extra: set[Path] = set()
    for f in files:
        for sub in ("templates",):
            if f'"{sub}"' in f.read_text(encoding="utf-8") and (f.parent / sub).is_dir():
                extra.update(p for p in (f.parent / sub).rglob("*") if p.is_file())
    return extra


def covered(path: Path, deps: list[str]) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel == d or rel.startswith(d.rstrip("/") + "/") for d in deps)


def stages() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


@pytest.mark.parametrize("name", sorted(stages()))
def test_stage_depends_on_every_file_its_command_imports(name: str) -> None:
    stage = stages()[name]
    match = COMMAND.fullmatch(stage["cmd"].strip())
    assert match, f"stage {name}: cmd must be `python -m blindmcq.<module>` for this check: {stage['cmd']}"
    deps = [str(d) for d in stage.get("deps", [])]
    files, reads_conf = closure(match.group(1))
    files |= data_files(files)
    missing = sorted(f.relative_to(ROOT).as_posix() for f in files if not covered(f, deps))
    assert not missing, f"stage {name} imports files that are not in its deps: {missing}"
    if reads_conf:
        assert any(d == "conf" or d.startswith("conf/") for d in deps), (
            f"stage {name} reads conf/ at run time but does not depend on conf"
        )


def test_the_closure_sees_lazy_and_by_name_imports() -> None:
    files, reads_conf = closure("blindmcq.stages.probe")
    rel = {f.relative_to(ROOT).as_posix() for f in files}
    # the local backend is imported inside a function of the registry; parsing reads conf/labels
    wanted = {"src/blindmcq/tasks/probe.py", "src/blindmcq/tasks/parsing.py"}
    wanted.add("src/blindmcq/backends/local.py")
    assert wanted <= rel
    assert reads_conf


def test_corpus_depends_on_the_corrections_file() -> None:
    assert "defaults/corrections.yaml" in stages()["corpus"]["deps"]


def suggested_deps(module: str) -> list[str]:
    """A dep list covering a module's closure: a subpackage (other than stages) as a whole folder, so
    a new module inside it is covered already; top-level modules and stage entry points one by one."""
    files, reads_conf = closure(module)
    files |= data_files(files)
    package = SRC / "blindmcq"
    folders = sorted(
        {f.relative_to(package).parts[0] for f in files if len(f.relative_to(package).parts) > 1} - {"stages"}
    )
    out = [(package / d).relative_to(ROOT).as_posix() for d in folders]
    out += sorted(f.relative_to(ROOT).as_posix() for f in files if not covered(f, out))
    return (["conf"] if reads_conf else []) + out


if __name__ == "__main__":  # print each stage's suggested code deps: python tests/pipeline/test_stage_deps.py
    for stage_name, stage in stages().items():
        module = COMMAND.fullmatch(stage["cmd"].strip())
        print(f"{stage_name}:", *suggested_deps(module.group(1) if module else "?"), sep="\n  - ")
