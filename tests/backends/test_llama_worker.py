"""The llama.cpp benchmark worker picks the first binding whose library loads, and says why the others
did not (a wheel built for a newer C library imports but cannot load its library)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import types
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parents[2] / "benchmarks" / "_llama_worker.py"


def load_worker() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("_llama_worker_under_test", WORKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_py_sync(loads: bool) -> types.ModuleType:
    module = types.ModuleType("llama_cpp_py_sync")
    bindings = types.ModuleType("llama_cpp_py_sync._cffi_bindings")

    def get_lib() -> object:
        if not loads:
            raise RuntimeError("Failed to load llama.cpp library: version `GLIBC_2.38' not found\nmore")
        return object()

    bindings.get_lib = get_lib  # type: ignore[attr-defined]
    module._cffi_bindings = bindings  # type: ignore[attr-defined]
    return module


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    # neither binding is installed in the project's venv; each test puts in the ones it needs
    monkeypatch.setitem(sys.modules, "llama_cpp_py_sync", None)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    return load_worker()


def test_the_prebuilt_wheel_is_taken_when_its_library_loads(
    worker: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp_py_sync", fake_py_sync(loads=True))
    monkeypatch.setitem(sys.modules, "llama_cpp", types.ModuleType("llama_cpp"))
    assert worker.binding().__name__ == "llama_cpp_py_sync"


def test_a_wheel_whose_library_does_not_load_falls_through_to_llama_cpp_python(
    worker: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp_py_sync", fake_py_sync(loads=False))
    monkeypatch.setitem(sys.modules, "llama_cpp", types.ModuleType("llama_cpp"))
    why: list[str] = []
    assert worker.binding(why).__name__ == "llama_cpp"
    assert why == ["llama_cpp_py_sync: Failed to load llama.cpp library: version `GLIBC_2.38' not found"]


def test_no_binding_gives_none_and_every_reason(worker: types.ModuleType) -> None:
    why: list[str] = []
    assert worker.binding(why) is None
    assert [w.split(":")[0] for w in why] == ["llama_cpp_py_sync", "llama_cpp"]


def test_the_probe_exits_1_naming_the_bindings_it_tried(tmp_path: Path) -> None:
    # a Python whose path has neither binding: a stub package that fails to import stands in for each
    for name in ("llama_cpp_py_sync", "llama_cpp"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('no {name} here')\n")
    done = subprocess.run(
        [sys.executable, str(WORKER), "--probe"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    expected = "none; llama_cpp_py_sync: no llama_cpp_py_sync here; llama_cpp: no llama_cpp here"
    assert done.stdout.strip() == expected


def test_common_length_counts_the_shared_head(worker: types.ModuleType) -> None:
    assert worker.common_length([1, 2, 3, 4], [1, 2, 9]) == 2
    assert worker.common_length([1, 2], [1, 2, 3]) == 2
    assert worker.common_length([], [1]) == 0
