"""Count the ``.get(`` calls on configuration mappings in the core (issue #31: under 40).

The core is ``src/blindmcq`` less the edges where configuration enters (``stages/``, ``cli/``,
``sweep.py``, ``params.py``, ``wiring/``, ``config/``). A call counts when its receiver is named like
a config group or a config mapping (``cfg``, ``model_cfg``, ``params``, ``prompt``, ``labels``, ...), the
way the issue counted them. ``--by-file`` lists the files; ``--max N`` exits 1 above N.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "blindmcq"
EDGES = ("stages/", "cli/", "config/", "sweep.py", "params.py", "wiring/")
CONFIG_NAMES = frozenset(
    {"cfg", "config", "configs", "params", "model_cfg", "labels_cfg", "quota_cfg", "model", "labels",
     "prompt", "reasoning", "condition", "protocol", "probe", "dataset", "gate", "tracking", "statutes",
     "lexical", "analysis", "orders", "per_model", "intervention", "rewrite", "settings", "section",
     "defaults", "panel", "spec"}
)  # fmt: skip


def _names(node: ast.AST) -> set[str]:
    """The receiver's own name and the name it hangs off (``cfg`` and ``self`` in ``self.cfg``)."""
    names = set()
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.add(node.id)
    return names


def count(package: Path = PACKAGE) -> Counter[str]:
    found: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith(EDGES):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if call and node.func.attr == "get" and _names(node.func.value) & CONFIG_NAMES:
                found[rel] += 1
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-file", action="store_true")
    parser.add_argument("--max", type=int)
    args = parser.parse_args(argv)
    found = count()
    if args.by_file:
        for rel, n in found.most_common():
            print(f"{n:4d}  {rel}")
    total = sum(found.values())
    print(f"{total} .get( calls on config mappings in the core")
    return 1 if args.max is not None and total > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
