"""DVC deps that cannot go stale, and no wider than the code a stage runs.

``scripts/sync_stage_deps.py`` computes each stage's code deps from the real import closure of its
``python -m`` module, file by file, plus the conf/ folders that code reads at run time. These tests check
that dvc.yaml is what it writes, that the closure sees lazy and by-name imports, and that editing a
backend leaves the stages before the probe up to date.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"python -m (blindmcq(?:\.\w+)+)(?:\s.*)?")
_SPEC = importlib.util.spec_from_file_location("sync_stage_deps", ROOT / "scripts" / "sync_stage_deps.py")
assert _SPEC is not None and _SPEC.loader is not None
sync_stage_deps = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sync_stage_deps)


def stages() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


def covered(rel: str, deps: list[str]) -> bool:
    """Whether DVC reruns a stage with ``deps`` when the file ``rel`` changes."""
    return any(rel == d or rel.startswith(d.rstrip("/") + "/") for d in deps)


def module_of(stage: dict) -> str:
    match = COMMAND.fullmatch(stage["cmd"].strip())
    assert match, f"cmd must be `python -m blindmcq.<module>` for the deps check: {stage['cmd']}"
    return match.group(1)


def test_dvc_yaml_is_what_the_script_writes() -> None:
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert sync_stage_deps.sync(text) == text, "run: python scripts/sync_stage_deps.py"


@pytest.mark.parametrize("name", sorted(stages()))
def test_stage_depends_on_every_file_its_command_imports(name: str) -> None:
    stage = stages()[name]
    deps = [str(d) for d in stage.get("deps", [])]
    files, conf = sync_stage_deps.closure(module_of(stage))
    files |= sync_stage_deps.data_files(files)
    missing = sorted(r for f in files if not covered(r := f.relative_to(ROOT).as_posix(), deps))
    assert not missing, f"stage {name} imports files that are not in its deps: {missing}"
    assert all(covered(c + "/x.yaml", deps) for c in conf), f"stage {name} reads {sorted(conf)}"


@pytest.mark.parametrize("name", ["corpus", "statutes", "baselines"])
def test_editing_a_backend_leaves_the_stages_before_the_probe_up_to_date(name: str) -> None:
    deps = [str(d) for d in stages()[name]["deps"]]
    for touched in ("src/blindmcq/backends/local.py", "src/blindmcq/tasks/probe.py", "conf/model/gemma.yaml"):
        assert not covered(touched, deps), f"editing {touched} would rerun {name}"
    # the same from the computed deps, so a regenerated dvc.yaml cannot widen them back
    computed = sync_stage_deps.code_deps(module_of(stages()[name]))
    assert not [
        d for d in computed if d.startswith(("src/blindmcq/backends/", "src/blindmcq/tasks/", "conf"))
    ]


def test_the_probe_does_rerun_when_a_backend_changes() -> None:
    """The check above can fail: the probe's deps hold the backend it may load, by file."""
    deps = [str(d) for d in stages()["probe"]["deps"]]
    assert covered("src/blindmcq/backends/local.py", deps)
    assert "src/blindmcq/backends" not in deps, "deps are listed per file, not widened to a folder"
    assert covered("conf/model/gemma.yaml", deps) and covered("conf/labels/latin.yaml", deps)


def test_the_closure_sees_lazy_and_by_name_imports() -> None:
    files, conf = sync_stage_deps.closure("blindmcq.stages.probe")
    rel = {f.relative_to(ROOT).as_posix() for f in files}
    # the local backend is named by string in the registry; the label schemes come from conf/labels
    assert {
        "src/blindmcq/tasks/probe.py",
        "src/blindmcq/tasks/parsing.py",
        "src/blindmcq/tasks/presentations.py",
        "src/blindmcq/backends/local.py",
    } <= rel
    assert conf == {"conf/labels", "conf/model"}


def test_conf_reads_are_found_by_loader_and_group(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from blindmcq.config import files\n"
        "def f(name):\n"
        "    return files.load_group('intervention', name), files.load_label_schemes()\n",
        encoding="utf-8",
    )
    names, conf = sync_stage_deps.direct_imports(module)
    assert "blindmcq.config.files" in names
    assert conf == {"conf/intervention", "conf/labels"}
    other = tmp_path / "n.py"  # (direct_imports caches by path)
    other.write_text("def f(group, load_group):\n    return load_group(group, 'x')\n", encoding="utf-8")
    assert sync_stage_deps.direct_imports(other)[1] == {"conf"}  # a group that is not literal: all of conf


def test_corpus_depends_on_the_corrections_file() -> None:
    assert "defaults/corrections.yaml" in stages()["corpus"]["deps"]
