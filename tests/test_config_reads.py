"""Typed all the way: no core module reads a configuration by ``.get``, subscript or ``getattr`` on a mapping,
and no stage or sweep restates a schema default.

The core is every module of ``src/blindmcq`` outside the edge. The edge is where configuration enters and
is logged: the stages (``stages/``), the sweep (``sweep.py``) and the command lines (``cli/``), which read
the composed mapping that ``params.yaml`` holds and MLflow logs (``hydra_plugins/`` lies outside the package);
and the door itself, the ``config/`` package and ``params.py``, where a mapping becomes a typed config.

A config read is recognised by name: a ``.get(...)`` call, a subscript or a ``getattr(...)`` whose object is
named ``cfg``, ``model_cfg``, ``params``, ``config``, ``model`` or ``*_cfg`` / ``*_config`` / ``*_params``
(also as ``self.<name>``), or is a parameter annotated as a model config (``ModelConfig``) or the composed
config (``Params``). Other mappings a module reads (a provider's JSON, a wire body, a record of a file) are
data, not configuration, and are named for what they are.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from source_trees import parse_source, walk

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "blindmcq"
EDGE = ("stages/", "cli/", "sweep.py", "config/", "params.py")
CONFIG_NAME = re.compile(r"^(cfg|model_cfg|params|config|model|\w+_cfg|\w+_config|\w+_params)$")
CONFIG_ANNOTATION = re.compile(r"^(ModelConfig|Params)( \| None)?$")


def _named_config(node: ast.expr, annotated: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return bool(CONFIG_NAME.match(node.id)) or node.id in annotated
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return bool(CONFIG_NAME.match(node.attr))
    return False


def _is_read(node: ast.AST, annotated: set[str]) -> bool:
    if isinstance(node, ast.Subscript):
        return isinstance(node.ctx, ast.Load) and _named_config(node.value, annotated)
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return _named_config(node.func.value, annotated)
    if isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args:
        return _named_config(node.args[0], annotated)
    return False


def config_reads(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every config read in ``source``, as the module docstring defines one."""
    out: list[tuple[int, str]] = []
    tree = parse_source(source)
    scopes: list[ast.AST] = [
        tree,
        *(n for n in walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
    ]
    seen: set[int] = set()
    for scope in scopes:
        annotated: set[str] = set()
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]
            annotated = {
                a.arg
                for a in args
                if a.annotation is not None and CONFIG_ANNOTATION.match(ast.unparse(a.annotation))
            }
        for node in walk(scope):
            if id(node) in seen:
                continue
            if _is_read(node, annotated):
                seen.add(id(node))
                out.append((node.lineno, ast.unparse(node)))
    return sorted(out)


def _core() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(EDGE):
            files.append(path)
    return files


def test_the_core_reads_no_config_mapping() -> None:
    found = [
        f"{path.relative_to(PACKAGE).as_posix()}:{line}: {code}"
        for path in _core()
        for line, code in config_reads(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "read the typed config instead:\n" + "\n".join(found)


def test_the_walk_covers_the_core() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in _core()}
    assert {"tasks/probe.py", "wiring/probe.py", "wiring/runs.py", "engine/run.py", "backends/registry.py",
            "datasets/fingerprint.py", "tasks/capacity.py"} <= names  # fmt: skip
    assert not any(n.startswith(("stages/", "cli/", "config/")) for n in names)


@pytest.mark.parametrize(
    ("code", "reads"),
    [
        ("def f(model_cfg):\n    return model_cfg.get('name')", 1),
        ("def f(params):\n    return params['probe']['cache']", 1),  # a chain is one read, its first
        ("def f(model):\n    return getattr(model, 'regions', None)", 1),
        ("def f(self):\n    return self.cfg['x']", 1),
        ("def f(m: ModelConfig):\n    return m['name']", 1),
        ("def f(p: Params | None):\n    return p.get('seed')", 1),
        ("def f(gate_cfg):\n    return gate_cfg.k", 0),  # a typed read
        ("def f(wire):\n    return wire['messages']", 0),  # a wire body is data
        ("def f(m: Mapping[str, ModelConfig]):\n    return m['longest']", 0),  # a lookup by name
    ],
)
def test_the_walk_finds_each_kind_of_read(code: str, reads: int) -> None:
    assert len(config_reads(code)) == reads


def _literal_defaults(source: str) -> list[tuple[int, str]]:
    """``cfg.get(key, <literal>)`` on a config mapping: a fallback restated beside the schema's default."""
    out = []
    for node in walk(parse_source(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and len(node.args) == 2 and _named_config(node.func.value, set())
                and isinstance(node.args[1], ast.Constant) and node.args[1].value is not None):  # fmt: skip
            out.append((node.lineno, ast.unparse(node)))
    return out


def test_the_edge_restates_no_schema_default() -> None:
    """Where the stages, the sweep and the run names read a setting, its default is the schema's (a typed
    read), never a literal beside it (``cfg.get("orders", "all")``)."""
    edge = [*sorted((PACKAGE / "stages").glob("*.py")), PACKAGE / "sweep.py", PACKAGE / "wiring" / "runs.py"]
    found = [
        f"{path.relative_to(PACKAGE).as_posix()}:{line}: {code}"
        for path in edge
        for line, code in _literal_defaults(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def _schema_defaults() -> dict[str, set[tuple[type, object]]]:
    """Each schema field's literal default (a number, text or true/false), by field name."""
    import dataclasses

    from blindmcq.config import schema

    out: dict[str, set[tuple[type, object]]] = {}
    for value in vars(schema).values():
        ours = isinstance(value, type) and value.__module__ == schema.__name__
        if ours and dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                if isinstance(f.default, int | float | str | bool):
                    out.setdefault(f.name, set()).add((type(f.default), f.default))
    return out


def restated_defaults(source: str, defaults: dict[str, set[tuple[type, object]]]) -> list[tuple[int, str]]:
    """``(line, code)`` of each keyword default in ``source`` that restates a schema field's default: a
    function parameter named like the field with its default (``seed: int = 0``), or
    ``<mapping>.get("<field>", <its default>)``."""

    def literal(node: ast.expr | None) -> tuple[type, object] | None:
        if isinstance(node, ast.Constant) and node.value is not None:
            return (type(node.value), node.value)
        return None

    out: list[tuple[int, str]] = []
    for node in walk(parse_source(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = [*zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True),
                     *zip(a.kwonlyargs, a.kw_defaults, strict=True)]  # fmt: skip
            for arg, given in pairs:
                value = literal(given)
                if value is not None and value in defaults.get(arg.arg, set()):
                    out.append((node.lineno, f"{node.name}({arg.arg}={value[1]!r})"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):  # fmt: skip
            value = literal(node.args[1])
            if value is not None and value in defaults.get(node.args[0].value, set()):
                out.append((node.lineno, ast.unparse(node)))
    return sorted(out)


def test_the_edges_restate_no_schema_default_as_a_keyword_default() -> None:
    """Where configuration enters (the stages, the command lines, the sweep, the loaders, the run names),
    a setting left out takes the schema's default (a typed read, or ``schema.default``), never a literal
    written beside it."""
    defaults = _schema_defaults()
    edge = [p for p in sorted(PACKAGE.rglob("*.py"))
            if p.relative_to(PACKAGE).as_posix().startswith((*EDGE, "wiring/runs.py"))
            and p.name != "schema.py"]  # fmt: skip
    found = [
        f"{path.relative_to(PACKAGE).as_posix()}:{line}: {code}"
        for path in edge
        for line, code in restated_defaults(path.read_text(encoding="utf-8"), defaults)
    ]
    assert found == [], "take the default from the schema:\n" + "\n".join(found)


# Parameters and record fields that share a schema field's name and default value but are no setting of
# it: each says why.
NOT_A_SETTING = {
    "analysis/frame.py": {
        "select(forced=False)",  # a row filter (forced-placement rows or ordered ones), not condition.forced
        "Baseline.labels='latin'",  # conf/config.yaml's labels group, which no schema field holds
    },
    "answers/records.py": {"PredictionRecord.backend=''"},  # a row's backend name, not a model config's
    "backends/base.py": {"Abilities.logprobs=False"},  # what a backend can do, declared by its class
    # what one rendered prompt holds, filled from the prompt group by build_presentations
    "tasks/presentations.py": {"Presentation.language='uk'", "Presentation.answer_cue=''"},
}


def record_defaults(source: str, defaults: dict[str, set[tuple[type, object]]]) -> list[tuple[int, str]]:
    """``(line, code)`` of each class field in ``source`` (a dataclass's ``name: type = <literal>``) whose
    default restates a schema field's of the same name."""
    out: list[tuple[int, str]] = []
    for node in walk(parse_source(source)):
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                field = isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
                if not (field and isinstance(st.value, ast.Constant) and st.value.value is not None):
                    continue
                if (type(st.value.value), st.value.value) in defaults.get(st.target.id, ()):
                    out.append((st.lineno, f"{node.name}.{st.target.id}={st.value.value!r}"))
    return out


def test_the_core_restates_no_schema_default_as_a_keyword_default() -> None:
    """A core function whose callers pass a setting takes it without a default; a library-level default
    (a statistics helper, a reader a notebook calls) is the schema's, named (``default(Analysis, "seed")``,
    or a constant the schema itself uses), never a literal equal to it. So is a core record's field
    default (``RewriteConfig``, ``Baseline``, ...)."""
    defaults = _schema_defaults()
    found = [
        f"{path.relative_to(PACKAGE).as_posix()}:{line}: {code}"
        for path in _core()
        for line, code in [*restated_defaults(path.read_text(encoding="utf-8"), defaults),
                           *record_defaults(path.read_text(encoding="utf-8"), defaults)]
        if code not in NOT_A_SETTING.get(path.relative_to(PACKAGE).as_posix(), set())
    ]
    assert found == [], "make it required, or take the default from the schema:\n" + "\n".join(found)


def test_each_exemption_is_still_there() -> None:
    """An exemption whose parameter changed or left goes too (the list holds only real cases)."""
    defaults = _schema_defaults()
    for rel, codes in NOT_A_SETTING.items():
        source = (PACKAGE / rel).read_text(encoding="utf-8")
        found = {code for _, code in restated_defaults(source, defaults) + record_defaults(source, defaults)}
        assert codes <= found, rel


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("def f(seed: int = 0): ...", 1),  # Config.seed's default
        ("def f(*, orders='all'): ...", 1),  # Gate.orders'
        ("def f(seed: int = 7): ...", 0),  # another value: a choice, not a restatement
        ("def f(seed=None): ...", 0),
        ("def f(orders=default(Gate, 'orders')): ...", 0),  # named from the schema
        ("def f(slot: int = CONSTANT_SLOT): ...", 0),  # a constant the schema uses too
        ("x = probe.get('seed', 0)", 1),
        ("x = tracking.get('enabled', True)", 1),
        ("x = probe.get('seed', default(Probe, 'seed'))", 0),  # taken from the schema
        ("x = row.get('unrelated', 0)", 0),
    ],
)
def test_the_walk_finds_a_restated_default(code: str, found: int) -> None:
    assert len(restated_defaults(code, _schema_defaults())) == found


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("class C:\n    tolerance: float = 0.15", 1),  # RewriteIntervention.tolerance's default
        ("class C:\n    tolerance: float = _SCHEMA.tolerance", 0),  # the schema's record
        ("class C:\n    tolerance: float = 0.2", 0),
        ("tolerance: float = 0.15", 0),  # not a record's field
    ],
)
def test_the_walk_finds_a_restated_record_default(code: str, found: int) -> None:
    assert len(record_defaults(code, _schema_defaults())) == found
