"""Typed all the way: no core module reads a configuration by ``.get``, subscript or ``getattr`` on a mapping,
and no stage or sweep restates a schema default.

The core is every module of ``src/blindmcq`` outside the edge. The edge is where configuration enters and
is logged: the stages (``stages/``), the sweep (``sweep.py``) and the command lines (``cli/``), which read
the composed mapping that ``params.yaml`` holds and MLflow logs (``hydra_plugins/`` lies outside the package);
and the door itself, the ``config/`` package and ``params.py``, where a mapping becomes a typed config.

A config read is recognised by name: a ``.get(...)`` call, a subscript or a ``getattr(...)`` whose object is
named ``cfg``, ``model_cfg``, ``params``, ``config``, ``model`` or ``*_cfg`` / ``*_config`` / ``*_params``
(also as ``self.<name>``), or is a parameter annotated as a model config (``ModelConfig``) or the composed
config (``Params``); so is the same read through ``params.section``/``params.require``, and a ``**`` spread
of such a mapping into a new dict, except straight into a schema check (``validate_group(..., {**cfg})``:
a mapping becoming its typed config). Other mappings a module reads (a provider's JSON, a wire body, a
record of a file) are data, not configuration, and are named for what they are.
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


READERS = ("getattr", "section", "require")  # a call reading its first argument by key
CHECKS = ("validate", "validate_group", "typed", "model_config", "typed_model", "any_model_config")


def _checked_dicts(tree: ast.AST) -> set[int]:
    """The dict displays passed straight to a schema check (``validate_group("protocol", {**cfg})``)."""
    out: set[int] = set()
    for node in walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name in CHECKS:
                out |= {
                    id(a) for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Dict)
                }
    return out


def _is_read(node: ast.AST, annotated: set[str], checked: frozenset[int] | set[int] = frozenset()) -> bool:
    if isinstance(node, ast.Subscript):
        return isinstance(node.ctx, ast.Load) and _named_config(node.value, annotated)
    if isinstance(node, ast.Dict) and id(node) not in checked:
        return any(
            k is None and _named_config(v, annotated) for k, v in zip(node.keys, node.values, strict=True)
        )
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return _named_config(node.func.value, annotated)
    if isinstance(node.func, ast.Name) and node.func.id in READERS and node.args:
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
    checked = _checked_dicts(tree)
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
            if _is_read(node, annotated, checked):
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
        ("def f(params):\n    return section(params, 'model')", 1),  # through params.section
        ("def f(params):\n    return require(params, 'model.name')", 1),
        ("def f(model_cfg):\n    return {**model_cfg, 'answer_prefix': ''}", 1),  # a spread, then read
        ("def f(cfg):\n    return validate_group('protocol', {'name': 'md', **cfg})", 0),  # checked
        ("def f(body):\n    return {**body, 'stream': False}", 0),  # a wire body is data
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
        for line, code in [
            *restated_defaults(path.read_text(encoding="utf-8"), defaults),
            *record_defaults(path.read_text(encoding="utf-8"), defaults),
        ]
        if code not in NOT_A_SETTING.get(path.relative_to(PACKAGE).as_posix(), set())
    ]
    assert found == [], "make it required, or take the default from the schema:\n" + "\n".join(found)


def test_each_exemption_is_still_there() -> None:
    """An exemption whose parameter changed or left goes too (the list holds only real cases)."""
    defaults, literals = _schema_defaults(), _schema_literals()
    for rel, codes in NOT_A_SETTING.items():
        source = (PACKAGE / rel).read_text(encoding="utf-8")
        found = {code for _, code in restated_defaults(source, defaults) + record_defaults(source, defaults)}
        assert codes <= found, rel
    for rel, codes in NOT_RESTATED.items():
        source = (PACKAGE / rel).read_text(encoding="utf-8")
        assert codes <= {code for _, code in restated_elsewhere(source, defaults, literals)}, rel


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


# ---------------------------------------------------------------- command-line and module-level restatements


def _schema_literals() -> dict[str, set[tuple[str, ...]]]:
    """Each schema field's ``Literal`` words (``scoring``: ("letter", "cloze")), by field name; a field
    typed ``list[Literal[...]]`` or ``Literal[...] | None`` counts with its words."""
    import dataclasses
    import typing

    from blindmcq.config import schema

    def words(hint: object) -> tuple[str, ...] | None:
        origin = typing.get_origin(hint)
        if origin is typing.Literal:
            args = typing.get_args(hint)
            return args if all(isinstance(a, str) for a in args) else None
        for arg in typing.get_args(hint) if origin is not None else ():
            found = words(arg)
            if found:
                return found
        return None

    out: dict[str, set[tuple[str, ...]]] = {}
    for value in vars(schema).values():
        ours = isinstance(value, type) and value.__module__ == schema.__name__
        if ours and dataclasses.is_dataclass(value):
            hints = typing.get_type_hints(value)
            for f in dataclasses.fields(value):
                found = words(hints.get(f.name))
                if found:
                    out.setdefault(f.name, set()).add(found)
    return out


def _literal(node: ast.expr | None) -> tuple[type, object] | None:
    if isinstance(node, ast.Constant) and node.value is not None:
        return (type(node.value), node.value)
    return None


def _words(node: ast.expr | None) -> tuple[str, ...] | None:
    if isinstance(node, ast.Tuple | ast.List) and node.elts:
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    return None


def _field_names(constant: str) -> set[str]:
    """The schema fields a module constant names: ``DEFAULT_SEED`` -> seed; ``SCORINGS`` -> scoring."""
    base = constant.lower().removeprefix("default_")
    return {base, base.removesuffix("s")}


def restated_elsewhere(
    source: str, defaults: dict[str, set[tuple[type, object]]], literals: dict[str, set[tuple[str, ...]]]
) -> list[tuple[int, str]]:
    """``(line, code)`` of each restatement the keyword-default walk does not see: an ``add_argument``
    whose ``default`` equals the schema default of the field its destination names (``--seed``,
    ``default=0``) or whose ``choices`` spell that field's ``Literal``; and a module-level constant
    naming a field (``DEFAULT_SEED``, ``SCORINGS``) whose value is that field's default or words."""
    out: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):  # fmt: skip
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        long = next((f for f in flags if f.startswith("--")), None)
        dest_node = keywords.get("dest")
        dest = dest_node.value if isinstance(dest_node, ast.Constant) else None
        dest = dest or (long[2:].replace("-", "_") if long else None)
        if dest is None:
            continue
        value = _literal(keywords.get("default"))
        if value is not None and value in defaults.get(dest, set()):
            out.append((node.lineno, f"{long} default={value[1]!r}"))
        choices = _words(keywords.get("choices"))
        if choices is not None and choices in literals.get(dest, set()):
            out.append((node.lineno, f"{long} choices={list(choices)}"))
    for stmt in tree.body:
        pairs: list[tuple[ast.expr, ast.expr | None]] = []
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value_node = stmt.targets[0], stmt.value
            if isinstance(target, ast.Tuple) and isinstance(value_node, ast.Tuple):
                pairs = list(zip(target.elts, value_node.elts, strict=False))
            else:
                pairs = [(target, value_node)]
        elif isinstance(stmt, ast.AnnAssign):
            pairs = [(stmt.target, stmt.value)]
        for target, value_node in pairs:
            if not (isinstance(target, ast.Name) and target.id.isupper()):
                continue
            names = _field_names(target.id)
            value = _literal(value_node)
            words = _words(value_node)
            if value is not None and any(value in defaults.get(n, set()) for n in names):
                out.append((stmt.lineno, f"{target.id}={value[1]!r}"))
            elif words is not None and any(words in literals.get(n, set()) for n in names):
                out.append((stmt.lineno, f"{target.id}={words!r}"))
    return sorted(out)


# Module constants and options that share a schema field's name and value but are no setting of it.
NOT_RESTATED = {
    "labels.py": {"DEFAULT_LINE='{label}) {text}'"},  # the definition: the schema's Labels.line takes it
    # the Commission's and the customs bank's four options, not LEXam's n_options setting
    "corpus/assemble.py": {"N_OPTIONS=4"},
    "datasets/customs.py": {"N_OPTIONS=4"},
}


def test_no_option_or_module_constant_restates_the_schema() -> None:
    """A command-line option's default and choices, and a module's constant named for a setting, come
    from the schema (``default(Config, "seed")``, ``vocabulary.SCORINGS``), never a literal equal to it."""
    defaults, literals = _schema_defaults(), _schema_literals()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ("config/schema.py", "vocabulary.py"):
            continue
        for line, code in restated_elsewhere(path.read_text(encoding="utf-8"), defaults, literals):
            if code not in NOT_RESTATED.get(rel, set()):
                found.append(f"{rel}:{line}: {code}")
    assert found == [], "take it from the schema:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("p.add_argument('--seed', type=int, default=0)", 1),  # Config.seed's default
        ("p.add_argument('--seed', type=int, default=default(Config, 'seed'))", 0),
        ("p.add_argument('--seed', type=int, default=7)", 0),
        ("p.add_argument('--pick', dest='seed', default=0)", 1),
        ("p.add_argument('--scoring', choices=['letter', 'cloze'])", 1),  # LocalModel.scoring's Literal
        ("p.add_argument('--scoring', choices=list(SCORINGS))", 0),
        ("DEFAULT_SEED = 0", 1),
        ("DEFAULT_SAMPLE, DEFAULT_SEED = 60, 0", 1),  # the sample's schema default is null
        ("SCORINGS = ('letter', 'cloze')", 1),
        ("CLOZE_NORMS = ('raw', 'token', 'char')", 1),
        ("SCORINGS = get_args(Scoring)", 0),
        ("def f():\n    SEED = 0", 0),  # not module level
    ],
)
def test_the_walk_finds_an_option_or_constant_restating_the_schema(code: str, found: int) -> None:
    assert len(restated_elsewhere(code, _schema_defaults(), _schema_literals())) == found
