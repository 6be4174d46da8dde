"""Typed all the way: a core function takes the typed group or model config it needs, never a mapping it
checks on entry. Configuration is checked once where it enters (``params.load_params``, a command line, a
stage), so a core function annotated to take a config as a mapping (``Prompt | Mapping[str, Any]``, or a
config parameter typed ``Mapping``) is a second door, and fails here unless it is listed below with why.

A parameter is a mapping config when its annotation names ``Mapping``/``dict`` together with a schema
dataclass (``config.schema``, under any import alias) or an alias of such a union (``ModelConfig``), or
when the parameter is named for a config (``cfg``, ``*_cfg``, ``params``, a group's name such as
``dataset`` or ``prompt``) and its annotation is a ``Mapping``/``dict``.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from source_trees import parse_source, walk

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "blindmcq"
EDGE = ("stages/", "cli/", "sweep.py", "config/", "params.py", "wiring/")
MAPPINGS = {"Mapping", "MutableMapping", "dict", "Dict"}
GROUPS = {"dataset", "prompt", "labels", "reasoning", "protocol", "condition", "probe", "gate", "tracking",
          "analysis", "model", "panel", "statutes", "intervention"}  # fmt: skip
CONFIG_NAME = re.compile(r"^(cfg|model_cfg|params|config|\w+_cfg|\w+_config|\w+_params)$")


def _schema_names() -> set[str]:
    from blindmcq.config import schema

    return {
        name
        for name, value in vars(schema).items()
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == schema.__name__
    }


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _members(node: ast.expr) -> list[ast.expr]:
    """The alternatives of a union annotation (``A | B | None``), or the annotation itself."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _members(node.left) + _members(node.right)
    return [node]


def _head(node: ast.expr) -> str:
    """The name an annotation member is of: ``Mapping`` for ``Mapping[str, Any]``, ``Prompt``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _door(node: ast.expr, typed: set[str], aliases: set[str]) -> bool:
    """A union of a mapping and a typed config, here or as the values of a mapping by name
    (``Mapping[str, Labels | Mapping[str, Any]]``) or the items of a sequence."""
    members = _members(node)
    heads = {_head(m) for m in members}
    if (heads & MAPPINGS and heads & typed) or heads & aliases:
        return True
    by_name = any(
        _head(m) in MAPPINGS and isinstance(m, ast.Subscript) and isinstance(m.slice, ast.Tuple)
        and len(m.slice.elts) == 2 and _door(m.slice.elts[1], typed, aliases)
        for m in members
    )  # fmt: skip
    listed = any(
        _head(m) in {"Sequence", "Iterable", "list", "tuple"} and isinstance(m, ast.Subscript)
        and _door(m.slice, typed, aliases)
        for m in members
    )  # fmt: skip
    return by_name or listed


def _typed_names(tree: ast.Module, schema: set[str]) -> set[str]:
    """The schema's dataclasses under the names this module imports them as, and its typed unions."""
    out = set(schema)
    for node in walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "blindmcq.config.schema":
            out |= {a.asname or a.name for a in node.names if a.name in schema}
    return out


def door_aliases(trees: list[ast.Module], schema: set[str]) -> set[str]:
    """Module-level names bound to a union of a schema dataclass and a mapping (``ModelConfig``)."""
    out: set[str] = set()
    for tree in trees:
        typed = _typed_names(tree, schema)
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                heads = {_head(m) for m in _members(node.value)}
                if heads & MAPPINGS and heads & typed:
                    out.add(node.targets[0].id)
    return out


def mapping_configs(source: str, schema: set[str], aliases: set[str] = frozenset()) -> list[tuple[int, str]]:
    """``(line, "function(parameter)")`` of each parameter in ``source`` that takes a config as a mapping."""
    tree = parse_source(source)
    typed = _typed_names(tree, schema)
    out = []
    for node in walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            if arg.annotation is None:
                continue
            members = _members(arg.annotation)
            union = _door(arg.annotation, typed, aliases)
            # a mapping of anything (``Mapping[str, Any]``)
            loose = any(_head(m) in MAPPINGS and _names(m) & {"Any", "object"} for m in members)
            named = bool(CONFIG_NAME.match(arg.arg) or arg.arg in GROUPS) and loose
            if union or named:
                out.append((node.lineno, f"{node.name}({arg.arg})"))
    return out


def _core() -> list[Path]:
    return [
        p for p in sorted(PACKAGE.rglob("*.py")) if not p.relative_to(PACKAGE).as_posix().startswith(EDGE)
    ]


def _found() -> dict[str, set[str]]:
    schema = _schema_names()
    sources = {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in _core()}
    aliases = door_aliases([parse_source(s) for s in sources.values()], schema)
    out: dict[str, set[str]] = {}
    for rel, source in sources.items():
        for _line, code in mapping_configs(source, schema, aliases):
            out.setdefault(rel, set()).add(code)
    return out


# The doors still open, each with why: (module, {"function(parameter)", ...}, reason).
OPEN_DOORS: list[tuple[str, set[str], str]] = [
    # data, not a door: the config as written, which a fingerprint hashes and MLflow logs, keys left out
    # staying out (schema.as_written); reading a setting from it is the typed group's job
    ("datasets/fingerprint.py", {"dataset_fingerprint(dataset)", "write_fingerprint(dataset)"}, "as written"),
    ("datasets/registry.py", {"build_corpus(dataset)"}, "as written"),
    (
        "reporting/tracking.py",
        {
            "flatten(config)",
            "flatten_all(config)",
            "log_run(config)",
            "long_values(config)",
            "pipeline_parent(config)",
            "stage_parent(config)",
            "log_run(tracking)",
        },
        "as written",
    ),
]


def _open_doors() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for rel, codes, _why in OPEN_DOORS:
        out.setdefault(rel, set()).update(codes)
    return out


def test_no_core_function_takes_a_config_as_a_mapping() -> None:
    allowed = _open_doors()
    found = [
        f"{rel}: {code}"
        for rel, codes in sorted(_found().items())
        for code in sorted(codes - allowed.get(rel, set()))
    ]
    assert found == [], "take the typed group or model config (checked where it enters):\n" + "\n".join(found)


def test_each_open_door_is_still_there() -> None:
    """A door that closed leaves the list (it holds only real cases)."""
    found = _found()
    for rel, codes in _open_doors().items():
        assert codes <= found.get(rel, set()), (rel, codes - found.get(rel, set()))


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("def f(prompt: Prompt | Mapping[str, Any]): ...", 1),  # a union with the schema's dataclass
        ("def f(p: Mapping[str, Any] | Labels | None = None): ...", 1),
        ("def f(prompt: Prompt): ...", 0),  # typed
        ("def f(dataset: Mapping[str, Any]): ...", 1),  # named for a group, a mapping
        ("def f(model_cfg: dict[str, Any]): ...", 1),
        ("def f(labels: Mapping[str, str]): ...", 0),  # slot names, not a config
        ("def f(wire: Mapping[str, Any]): ...", 0),  # a wire body is data
        ("def f(m: ModelLike): ...", 1),  # an alias of a union with a schema dataclass
        ("def f(schemes: Mapping[str, Labels]): ...", 0),  # typed values by name
        ("def f(schemes: Mapping[str, Labels | Mapping[str, Any]]): ...", 1),  # untyped values by name
        ("def f(models: Sequence[ModelLike]): ...", 1),
    ],
)
def test_the_walk_finds_a_mapping_config(code: str, found: int) -> None:
    source = "from blindmcq.config.schema import Labels, Prompt\n" + code
    assert len(mapping_configs(source, _schema_names(), {"ModelLike"})) == found
