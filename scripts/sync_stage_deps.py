"""Rewrite the code deps of every ``python -m blindmcq...`` stage in dvc.yaml to the import closure
that ``tests/pipeline/test_stage_deps.py`` computes, keeping every other dep (data, ``${...}``, outputs of
other stages), the order of those, and every comment.

    python scripts/sync_stage_deps.py [--check]

Code deps are the entries ``conf`` and ``src/...``; they are replaced in place (where the first of
them stood). ``--check`` changes nothing and exits 1 when dvc.yaml is out of date.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = re.compile(r"^  (\S[^:]*):\s*$")
CMD = re.compile(r"^    cmd: python -m (blindmcq[\w.]*)(?:\s.*)?$")
DEP = re.compile(r"^      - (\S.*?)\s*$")


def _suggester():
    path = ROOT / "tests" / "pipeline" / "test_stage_deps.py"
    spec = importlib.util.spec_from_file_location("_stage_deps", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.suggested_deps


def _is_code(dep: str) -> bool:
    return dep == "conf" or dep.startswith("src/")


def sync(text: str, suggest) -> str:
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
            elif dep is not None and _is_code(dep.group(1)) and module is not None:
                if not placed:
                    out.extend(f"      - {d}\n" for d in suggest(module))
                    placed = True
                continue
        out.append(line)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    path = ROOT / "dvc.yaml"
    before = path.read_text(encoding="utf-8")
    after = sync(before, _suggester())
    if args.check:
        return int(after != before)
    if after != before:
        path.write_text(after, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
