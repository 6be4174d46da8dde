"""The package's layout rules (issue #19): stages are wiring and import no other stage; the sweep
imports no stage."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "blindmcq"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _stages() -> set[str]:
    return {p.stem for p in (PACKAGE / "stages").glob("*.py") if not p.stem.startswith("_")}


def test_no_stage_imports_another_stage() -> None:
    stages = _stages()
    assert stages, "no stage modules found"
    for stage in stages:
        others = {f"blindmcq.stages.{s}" for s in stages - {stage}}
        assert not (_imported(PACKAGE / "stages" / f"{stage}.py") & others), stage


def test_the_sweep_imports_no_stage() -> None:
    sweep = next(PACKAGE.rglob("sweep.py"))
    assert not {n for n in _imported(sweep) if n.startswith("blindmcq.stages")}
