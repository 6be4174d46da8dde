"""The package's layout rules: stages are wiring and import no other stage, the sweep imports no stage,
configuration and command lines enter only at the edges, and every import keeps the layers of
``src/blindmcq/layers.toml``."""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from source_trees import parse_source, walk

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "blindmcq"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in walk(parse_source(path.read_text(encoding="utf-8"))):
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


# ---------------------------------------------------------------- where configuration enters

# Configuration enters at the edge: a stage or command line reads conf/ once and hands
# the core checked configs. These modules are the edge: the stages, the sweep, and the command lines, all
# in ``cli/`` (one module a command); ``config/`` and ``params.py`` are the readers themselves.
ENTRY_POINTS = ("stages/", "cli/", "config/", "params.py", "sweep.py")
CONF_READERS = frozenset({
    "CONF_DIR", "load_group", "read_group", "load_groups", "load_model_file", "load_model_config",
    "load_models", "load_label_schemes", "group_names", "hydra_conf_dir", "load_conf", "intervention_group",
    "default_choices",
})  # fmt: skip


def _under(path: Path, places: tuple[str, ...]) -> bool:
    """``path`` is one of ``places`` (a module, or a folder ending in "/") of the package."""
    rel = path.relative_to(PACKAGE).as_posix()
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in places)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _cli_main(tree: ast.Module, module: str) -> ast.AST | None:
    """The ``main`` of a module that runs as a command (a ``__main__`` guard, or a module of ``cli/``
    named in ``blindmcq.cli.COMMANDS``): such a module may read config files by name in its ``main``."""
    from blindmcq.cli import COMMANDS

    command = module in {m for m, _ in COMMANDS.values()} or any(
        isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) and "__name__" in ast.unparse(n.test)
        for n in tree.body
    )
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    return mains[0] if command and mains else None


def conf_reads(path: Path) -> list[str]:
    """Where ``path`` reads config files by name or names the conf/ folder: ``line: what``."""
    tree = parse_source(path.read_text(encoding="utf-8"))
    parts = path.relative_to(PACKAGE).with_suffix("").parts if path.is_relative_to(PACKAGE) else ()
    module = ".".join(("blindmcq", *parts))
    main = _cli_main(tree, module)
    exempt = {id(n) for n in walk(main)} if main is not None else set()
    docs = _docstrings(tree)
    found = []
    for node in walk(tree):
        if id(node) in exempt:
            continue
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = [a.name.rsplit(".", 1)[-1] for a in node.names]
        elif isinstance(node, ast.FunctionDef):
            names = [node.name]
        hits = [n for n in names if n in CONF_READERS]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value.strip()
            if text == "conf" or text.startswith(("conf/", "./conf")) or text.endswith("/conf"):
                hits.append(repr(node.value))
        found += [f"{node.lineno}: {h}" for h in hits]
    return sorted(set(found), key=lambda s: (int(s.split(":")[0]), s))


def test_configuration_enters_only_at_the_entry_points() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50, "the package was not found"
    offenders = {
        path.relative_to(PACKAGE).as_posix(): hits
        for path in modules
        if not _under(path, ENTRY_POINTS) and (hits := conf_reads(path))
    }
    assert not offenders, f"core modules that read conf/ by name (pass the configs in instead): {offenders}"


def test_the_conf_check_sees_a_read(tmp_path: Path) -> None:
    """The check above can fail: each way of reaching conf/ is caught, docstrings and a CLI's main are not."""
    module = tmp_path / "m.py"
    module.write_text(
        '"""Reads conf/labels (a docstring may say so)."""\n'
        "from blindmcq.config.files import load_group\n"
        "import blindmcq.config.files as files\n"
        "def f():\n"
        "    return files.CONF_DIR, Path('x') / 'conf', load_group('labels', 'latin')\n"
        "def main():\n"
        "    return files.load_model_file('gemma')\n"
        "if __name__ == '__main__':\n"
        "    main()\n",
        encoding="utf-8",
    )
    assert conf_reads(module) == ["2: load_group", "5: 'conf'", "5: CONF_DIR", "5: load_group"]


# ---------------------------------------------------------------- command lines live in cli/

# Where a parser or a ``main`` may be defined: the command lines (``cli/``), the stages (``python -m``
# from dvc.yaml) and the sweep (Hydra's entry point). No exception: ``make data`` is ``cli/data.py``.
COMMAND_HOMES = ("cli/", "stages/", "sweep.py")


def command_lines(path: Path) -> list[str]:
    """Where ``path`` defines a command line: a top-level ``main`` or an argparse parser, ``line: what``."""
    found = []
    for node in walk(parse_source(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name == "main" and node.col_offset == 0:
            found.append(f"{node.lineno}: def main")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("ArgumentParser", "add_subparsers", "add_argument"):
                found.append(f"{node.lineno}: {name}")
    return sorted(set(found), key=lambda s: (int(s.split(":")[0]), s))


def test_command_lines_live_only_in_cli() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50, "the package was not found"
    offenders = {
        path.relative_to(PACKAGE).as_posix(): hits
        for path in modules
        if not _under(path, COMMAND_HOMES) and (hits := command_lines(path))
    }
    assert not offenders, (
        f"command lines outside cli/ (move the parser and main to cli/<command>.py): {offenders}"
    )


def test_every_command_is_a_module_of_cli() -> None:
    from blindmcq.cli import COMMANDS

    assert {m for m, _ in COMMANDS.values()} == {
        f"blindmcq.cli.{p.stem}" for p in (PACKAGE / "cli").glob("*.py") if not p.stem.startswith("_")
    }


def test_the_command_line_check_sees_a_parser_and_a_main(tmp_path: Path) -> None:
    """The check above can fail: a parser built in a core module, and its ``main``."""
    module = tmp_path / "m.py"
    module.write_text(
        "import argparse\n"
        "def core(x):\n"
        "    def main():\n"  # a nested helper named main is no command line
        "        return x\n"
        "    return main()\n"
        "def main(argv=None):\n"
        "    parser = argparse.ArgumentParser(prog='x')\n"
        "    parser.add_argument('--y')\n"
        "    return parser.parse_args(argv)\n",
        encoding="utf-8",
    )
    assert command_lines(module) == ["6: def main", "7: ArgumentParser", "8: add_argument"]
    assert not command_lines(PACKAGE / "tasks" / "capacity.py")


# ---------------------------------------------------------------- the layers (src/blindmcq/layers.toml)

LAYERS_FILE = PACKAGE / "layers.toml"
MODULE_NAME = re.compile(r"^blindmcq(\.[A-Za-z_]\w*)+$")


@dataclass(frozen=True)
class Layers:
    """The rules of ``layers.toml``: each part's layer, each layer's allowed layers, the exceptions."""

    order: tuple[str, ...]  # bottom up
    part_layer: dict[str, str]
    uses: dict[str, frozenset[str]]
    exceptions: frozenset[tuple[str, str]]

    def layer_of(self, module: str) -> str | None:
        return self.part_layer.get(_part(module))


def read_layers(path: Path = LAYERS_FILE) -> Layers:
    """The layers file, checked: every part in one layer only, and ``uses`` naming only layers above."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    order: list[str] = []
    part_layer: dict[str, str] = {}
    uses: dict[str, frozenset[str]] = {}
    for layer in data["layer"]:
        name = layer["name"]
        assert name not in order, f"layer {name} listed twice"
        below = set(order)
        upward = [u for u in layer["uses"] if u not in below]
        assert not upward, f"layer {name} uses {upward}, which are not below it"
        for part in layer["holds"]:
            assert part not in part_layer, f"{part} is in layers {part_layer[part]} and {name}"
            part_layer[part] = name
        order.append(name)
        uses[name] = frozenset(layer["uses"])
    exceptions = frozenset((e["module"], e["imports"]) for e in data.get("exception", ()))
    assert all(e.get("why") for e in data.get("exception", ())), "each exception says why"
    return Layers(tuple(order), part_layer, uses, exceptions)


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        rel = path.relative_to(package.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of it that it imports. ``from pkg import name`` is an
    edge to ``pkg.name`` where that is a module, else to ``pkg``."""
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in walk(parse_source(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.update(
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                )
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and MODULE_NAME.match(node.value)
            ):
                found.add(node.value)  # importlib.import_module("blindmcq....")
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _part(module: str) -> str:
    """The first name under blindmcq (``__init__`` for the package itself)."""
    return module.split(".")[1] if module.count(".") else "__init__"


def unplaced(graph: dict[str, set[str]], layers: Layers) -> list[str]:
    """Modules whose part is in no layer."""
    return sorted(m for m in graph if layers.layer_of(m) is None)


def layer_breaks(graph: dict[str, set[str]], layers: Layers) -> list[str]:
    """Every import from one layer to another that the layer's ``uses`` does not allow."""
    breaks = []
    for module, deps in graph.items():
        here = layers.layer_of(module)
        for dep in deps:
            there = layers.layer_of(dep)
            if here == there or there in layers.uses.get(here, ()) or (module, dep) in layers.exceptions:
                continue
            breaks.append(f"{module} ({here}) -> {dep} ({there})")
    return sorted(breaks)


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_every_module_is_in_a_layer() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the package was not found"
    assert not unplaced(graph, read_layers())


def test_every_import_is_allowed_by_the_layers() -> None:
    """Every pair of layers, not a few: an import across layers must be named in ``uses``."""
    assert not layer_breaks(import_graph(), read_layers())


def test_no_import_circles() -> None:
    assert not import_circles(import_graph())


def test_the_leaves_stay_leaves() -> None:
    layers = read_layers()
    assert layers.uses["leaves"] == {"errors"}
    leaves = [m for m in import_graph() if layers.layer_of(m) == "leaves"]
    assert "blindmcq.surface" in leaves and "blindmcq.vocabulary" in leaves
    graph = import_graph()
    # a leaf uses only errors and other leaves, so using one never loads another layer
    assert all(graph[m] <= {"blindmcq.errors", *leaves} for m in leaves), {m: graph[m] for m in leaves}


def test_the_layer_rules_are_the_documented_ones() -> None:
    """docs/architecture.md points at the layers file instead of restating its rules."""
    doc = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "src/blindmcq/layers.toml" in doc
    layers = read_layers()
    assert layers.order[0] == "errors" and layers.order[-1] == "entry"
    # the rules the layout always kept, now read from the file
    assert "tasks" not in layers.uses["bank"] and "engine" not in layers.uses["backends"]
    assert not {"analysis", "reporting", "entry"} & layers.uses["tasks"]
    assert "tasks" not in layers.uses["engine"] and "tasks" not in layers.uses["analysis"]


def test_the_layer_checks_see_a_break_a_stray_and_a_circle(tmp_path: Path) -> None:
    """The checks above can fail: a lazy import that breaks a layer, a module in no layer, an upward
    ``uses``, a part in two layers, a circle through a lazy import."""
    package = tmp_path / "blindmcq"
    for folder in ("engine", "tasks", "backends", "stray"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "engine" / "run.py").write_text("def f():\n    from blindmcq.tasks import probe\n")
    (package / "tasks" / "probe.py").write_text("import blindmcq.engine.run\n")
    (package / "backends" / "a.py").write_text("from blindmcq.backends.b import x\n")
    (package / "backends" / "b.py").write_text(
        "def x():\n    import importlib\n    importlib.import_module('blindmcq.backends.a')\n"
    )
    rules = tmp_path / "layers.toml"
    layer = '[[layer]]\nname = "{}"\nholds = {}\nuses = {}\n'
    rules.write_text(
        layer.format("base", '["__init__", "backends"]', "[]")
        + layer.format("engine", '["engine"]', '["base"]')
        + layer.format("tasks", '["tasks"]', '["base", "engine"]'),
        encoding="utf-8",
    )
    graph = import_graph(package)
    layers = read_layers(rules)
    assert layer_breaks(graph, layers) == ["blindmcq.engine.run (engine) -> blindmcq.tasks.probe (tasks)"]
    assert unplaced(graph, layers) == ["blindmcq.stray"]
    assert sorted(import_circles(graph)) == [
        ["blindmcq.backends.a", "blindmcq.backends.b"],
        ["blindmcq.engine.run", "blindmcq.tasks.probe"],
    ]
    rules.write_text(layer.format("engine", '["engine"]', '["tasks"]') + layer.format("tasks", "[]", "[]"))
    with pytest.raises(AssertionError, match="not below it"):
        read_layers(rules)
    rules.write_text(layer.format("a", '["engine"]', "[]") + layer.format("b", '["engine"]', '["a"]'))
    with pytest.raises(AssertionError, match="in layers a and b"):
        read_layers(rules)


# ---------------------------------------------------------------- private names


def private_imports(package: Path = PACKAGE) -> list[str]:
    """``from blindmcq.x import _name`` and ``module._name`` on an imported project module, anywhere."""
    modules = _modules(package)
    found = []
    for name, path in sorted(modules.items()):
        tree = parse_source(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("blindmcq"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{name}:{node.lineno} imports {node.module}.{a.name}")
                    if f"{node.module}.{a.name}" in modules:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in modules})
        for node in walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                found.append(f"{name}:{node.lineno} reads {aliases[node.value.id]}.{node.attr}")
    return found


def test_no_module_imports_a_private_name() -> None:
    assert not private_imports()


def test_the_private_name_check_sees_both_forms(tmp_path: Path) -> None:
    package = tmp_path / "blindmcq"
    (package / "statutes").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "statutes" / "__init__.py").write_text("", encoding="utf-8")
    (package / "statutes" / "lexical.py").write_text("def _pick():\n    pass\n", encoding="utf-8")
    (package / "a.py").write_text("def f():\n    from blindmcq.statutes.lexical import _pick\n")
    (package / "b.py").write_text("from blindmcq.statutes import lexical\nlexical._pick()\n")
    assert private_imports(package) == [
        "blindmcq.a:2 imports blindmcq.statutes.lexical._pick",
        "blindmcq.b:2 reads blindmcq.statutes.lexical._pick",
    ]


# ---------------------------------------------------------------- the walk (docs/architecture.md)


def test_the_walk_lists_existing_files() -> None:
    """docs/architecture.md's walk from a PDF to Table 4's cell names files that exist, each once."""
    doc = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = re.findall(r"`([\w/]+\.py)`", doc.split("<!-- walk -->")[1].split("<!-- /walk -->")[0])
    assert listed and len(set(listed)) == len(listed)
    missing = [f for f in listed if not (PACKAGE / f).is_file()]
    assert not missing, missing
    # the steps the walk must not leave out: choosing an item, the index the lexical gate reads and the
    # analysis core the analyze stage calls
    needed = {"corpus/assemble.py", "corpus/settle.py", "statutes/index.py", "stages/statutes.py",
              "analysis/outputs.py"}  # fmt: skip
    assert needed <= set(listed), needed - set(listed)
    # each file after a stage is reached from the files before it (lazy and by-name imports too): a walk
    graph = import_graph()
    names = ["blindmcq." + f.removesuffix(".py").replace("/", ".") for f in listed]
    for i, name in enumerate(names):
        if ".stages." not in name:
            assert any(name in _reachable(graph, before) for before in names[:i]), f"{name} is off the walk"


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for module in graph.get(todo.pop(), ()):
            if module not in seen:
                seen.add(module)
                todo.append(module)
    return seen
