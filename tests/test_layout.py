"""The package's layout rules (issue #19): stages are wiring and import no other stage; the sweep
imports no stage."""

from __future__ import annotations

import ast
import re
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


# ---------------------------------------------------------------- where configuration enters

# Configuration enters at the edge (issues #19, #31): a stage or command line reads conf/ once and hands
# the core checked configs. These modules are the edge: the stages, the sweep, and the command lines, all
# in ``cli/`` (one module a command); ``config/`` and ``params.py`` are the readers themselves.
ENTRY_POINTS = ("stages/", "cli/", "config/", "params.py", "sweep.py")
CONF_READERS = frozenset({
    "CONF_DIR", "load_group", "load_groups", "load_model_file", "load_model_config", "load_models",
    "load_label_schemes", "group_names", "hydra_conf_dir", "load_conf", "intervention_cfg",
})  # fmt: skip


def _under(path: Path, places: tuple[str, ...]) -> bool:
    """``path`` is one of ``places`` (a module, or a folder ending in "/") of the package."""
    rel = path.relative_to(PACKAGE).as_posix()
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in places)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
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
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = path.relative_to(PACKAGE).with_suffix("").parts if path.is_relative_to(PACKAGE) else ()
    module = ".".join(("blindmcq", *parts))
    main = _cli_main(tree, module)
    exempt = {id(n) for n in ast.walk(main)} if main is not None else set()
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
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


# ---------------------------------------------------------------- command lines live in cli/ (issue #31)

# Where a parser or a ``main`` may be defined: the command lines (``cli/``), the stages (``python -m``
# from dvc.yaml) and the sweep (Hydra's entry point). No exception: ``make data`` is ``cli/data.py``.
COMMAND_HOMES = ("cli/", "stages/", "sweep.py")


def command_lines(path: Path) -> list[str]:
    """Where ``path`` defines a command line: a top-level ``main`` or an argparse parser, ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


# ---------------------------------------------------------------- layer contracts (issue #31)

# Which layer may not import which (every import counts: lazy ones inside functions too, and a module
# named by string for importlib). A layer is the first folder under blindmcq/.
FORBIDDEN = {
    "datasets": {"tasks"},
    "corpus": {"tasks"},
    "tasks": {"stages", "analysis", "reporting"},
    "engine": {"tasks"},
}
# Leaves every layer may use: they import nothing of the project but ``errors`` (pure statistics, the
# label schemes, the surface rules), so using one never loads another layer.
LEAVES = {"blindmcq.stats", "blindmcq.labels", "blindmcq.surface", "blindmcq.vocabulary"}
MODULE_NAME = re.compile(r"^blindmcq(\.[A-Za-z_]\w*)+$")


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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


def _layer(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def layer_breaks(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        for d in deps
        if _layer(d) in FORBIDDEN.get(_layer(m), set())
    )


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


def test_layers_import_only_downwards() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the package was not found"
    assert not layer_breaks(graph)


def test_no_import_circles() -> None:
    assert not import_circles(import_graph())


def test_the_leaves_stay_leaves() -> None:
    graph = import_graph()
    assert all(graph[m] <= {"blindmcq.errors"} for m in LEAVES), {m: graph[m] for m in LEAVES}


def test_the_layer_checks_see_a_break_and_a_circle(tmp_path: Path) -> None:
    """The checks above can fail: a lazy import that breaks a layer, a circle through a lazy import."""
    package = tmp_path / "blindmcq"
    for folder in ("engine", "tasks", "backends"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "engine" / "run.py").write_text("def f():\n    from blindmcq.tasks import probe\n")
    (package / "tasks" / "probe.py").write_text("import blindmcq.engine.run\n")
    (package / "backends" / "a.py").write_text("from blindmcq.backends.b import x\n")
    (package / "backends" / "b.py").write_text(
        "def x():\n    import importlib\n    importlib.import_module('blindmcq.backends.a')\n"
    )
    graph = import_graph(package)
    assert layer_breaks(graph) == ["blindmcq.engine.run -> blindmcq.tasks.probe"]
    assert sorted(import_circles(graph)) == [
        ["blindmcq.backends.a", "blindmcq.backends.b"],
        ["blindmcq.engine.run", "blindmcq.tasks.probe"],
    ]


# ---------------------------------------------------------------- typed configuration in the core (#31)


def _config_reads():
    import importlib.util

    path = PACKAGE.parents[1] / "scripts" / "config_reads.py"
    spec = importlib.util.spec_from_file_location("config_reads", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_core_reads_typed_configs_not_mappings() -> None:
    """Fewer than 40 ``.get(`` calls on config mappings in the core (issue #31 started at 291): the
    typed groups of ``config/schema.py`` flow to the core, defaults live in the schema."""
    found = _config_reads().count()
    assert sum(found.values()) < 40, found.most_common(8)


def test_the_config_read_count_sees_a_mapping_read(tmp_path: Path) -> None:
    core = tmp_path / "blindmcq"
    (core / "stages").mkdir(parents=True)
    reads = "def f(model_cfg, cfg):\n    return model_cfg.get('a'), cfg['x'].get('b')\n"
    (core / "core.py").write_text(reads)
    (core / "stages" / "edge.py").write_text("def g(params):\n    return params.get('a')\n")
    (core / "other.py").write_text("def h(response):\n    return response.get('a')\n")
    assert dict(_config_reads().count(core)) == {"core.py": 2}


def test_the_walk_lists_existing_files() -> None:
    """docs/architecture.md's walk from a PDF to Table 4's cell names files that exist, as many as it says."""
    doc = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = re.findall(r"`([\w/]+\.py)`", doc.split("<!-- walk -->")[1].split("<!-- /walk -->")[0])
    assert listed and len(set(listed)) == len(listed)
    missing = [f for f in listed if not (PACKAGE / f).is_file()]
    assert not missing, missing
    stated = re.search(r"<!-- /walk -->\s*\((\d+),", doc)
    assert stated and int(stated.group(1)) == len(listed)
    assert len(listed) <= 15, "issue #31: the walk passes through at most 15 files"
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
