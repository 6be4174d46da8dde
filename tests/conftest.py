"""Shared test fixtures: the repo root, the full inputs (or a skip naming them), and real-text samples.

A clone with nothing beside it must pass every test: tests that need the full inputs ask for the
``shared_data`` fixture, which skips naming the missing file and marks the test ``needs_data``
(``pytest -m needs_data`` runs just those, after ``make data``). Nothing looks for data at import time.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "fixtures" / "samples"
# every file of the full inputs (data/, filled by `make data`), as laid out in data/ and the samples
FULL_INPUTS = (
    "ua-customs-exam/questions.json",
    "lexam/MCQs_test.xlsx",
    "lexam/MCQs_test_perturbation.xlsx",
    "ua-legislation/provisions.jsonl.xz",
)

# CI, `make test` (BLINDMCQ_DERANDOMIZE=1) and anyone who sets CI get the same examples every run: a red
# build must not be chance. A bare `pytest` explores new examples.
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
if os.environ.get("CI") or os.environ.get("BLINDMCQ_DERANDOMIZE"):
    settings.load_profile("ci")


def data_candidates() -> list[Path]:
    """Where the full inputs may be: $BLINDMCQ_SHARED_DATA alone if set, else data/, then ../shared/data."""
    env = os.environ.get("BLINDMCQ_SHARED_DATA")
    return [Path(env)] if env else [ROOT / "data", ROOT.parent / "shared" / "data"]


def full_data_dir() -> Path | None:
    """The first candidate holding every file of the full inputs, or None."""
    return next((c for c in data_candidates() if all((c / f).is_file() for f in FULL_INPUTS)), None)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The full inputs' folder; the one place a test skips for want of data, naming the file."""
    found = full_data_dir()
    if found is None:
        first = data_candidates()[0]
        missing = next((f for f in FULL_INPUTS if not (first / f).is_file()), FULL_INPUTS[0])
        message = f"needs the full inputs: {first / missing} not found (run `make data`)"
        if os.environ.get("BLINDMCQ_REQUIRE_DATA"):  # CI's data phase: a skip there would hide a gap
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="session")
def samples() -> Path:
    """Small real-text cuts of the full inputs, same names and shapes (tests/fixtures/samples/README.md)."""
    return SAMPLES


@pytest.fixture(scope="session", params=["samples", pytest.param("full", marks=pytest.mark.needs_data)])
def inputs(request: pytest.FixtureRequest) -> Path:
    """For tests whose checks hold on any cut of the inputs: the samples, then the full inputs if present."""
    return SAMPLES if request.param == "samples" else request.getfixturevalue("shared_data")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # one source of truth: a test needs the full inputs exactly when it asks for them; it belongs to the
    # full suite (`make test-full`) when marked so, when it drives a browser, or when it is `slow` (the
    # local model, a large index)
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "shared_data" in names:
            item.add_marker(pytest.mark.needs_data)
        if "browser" in names or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.full)


# Test modules whose tests must share one xdist worker: each builds a costly module fixture (the whole
# pipeline in process, an audit) once per worker it runs on, or pays torch's import there. Listed by path
# here because xdist's own xdist_group mark has no effect under pytest 9 (it rewrites item._nodeid, which
# pytest 9 no longer reads). A module with a module- or class-scoped fixture is kept on one worker too
# (worker_group); every other test goes to whichever worker is free, as under --dist load.
SAME_WORKER = {
    "tests/pipeline/test_pipeline.py": "pipeline",
    "tests/backends/test_local.py": "torch",
    "tests/test_reproduction.py": "torch",
    "tests/harnesses/test_harness_documents.py": "harness-documents",
    # one analysis of the simulated predictions (tests/analysis/conftest.py's `analysis`)
    "tests/analysis/test_tables.py": "analysis",
    "tests/analysis/test_figures.py": "analysis",
    # the checks that parse the whole package share its parsed trees (tests/source_trees.py)
    "tests/test_layout.py": "source-trees",
    "tests/test_config_reads.py": "source-trees",
    "tests/test_dependencies.py": "source-trees",
}


# a fixture built once per module (or class): each worker that runs a test of the module builds it again
_SHARED_SCOPE = re.compile(r"""\bscope\s*=\s*["'](module|class|package)["']""")


@functools.cache
def _has_shared_fixture(path: str) -> bool:
    """Whether the test module at ``path`` (relative to the repository root) defines a fixture of module,
    class or package scope."""
    try:
        return bool(_SHARED_SCOPE.search((ROOT / path).read_text(encoding="utf-8")))
    except OSError:
        return False


def worker_group(nodeid: str) -> str:
    """The scheduling unit of a test: its SAME_WORKER group; else its module where the module builds a
    module- or class-scoped fixture (built once, on one worker, instead of once on each); else the test
    itself."""
    path = nodeid.split("::", 1)[0]
    if path in SAME_WORKER:
        return SAME_WORKER[path]
    return path if _has_shared_fixture(path) else nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under -n N (--dist load, the default), schedule with worker_group as the unit of work."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SameWorkerScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return SameWorkerScheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def one_lemmatizer_per_worker() -> Iterator[None]:
    """Every ``Analyzer`` built without a lemmatizer of its own (each audit's lexical search, the statutes
    stage) gets one shared ``Lemmatizer`` per test process instead of a fresh one: a lemma is a function of
    the word alone, so only the pymorphy3 dictionary load and the lemmatising of the same statutes again
    (about a CPU-second per Ukrainian audit) are saved. A ``Lemmatizer()`` called by name is a fresh one,
    as the statutes tests want."""
    from blindmcq.statutes import text

    shared: list[text.Lemmatizer] = []

    def lemmatizer() -> text.Lemmatizer:
        if not shared:
            shared.append(real())
        return shared[0]

    real = text.Lemmatizer
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text, "Lemmatizer", lemmatizer)
        yield


@dataclass(frozen=True)
class ShippedReport:
    """One ``blindmcq report --from releases/default`` run: its output folder, what it printed, and the
    scratch folder it ran in (which must hold nothing but ``out`` afterwards)."""

    out: Path
    scratch: Path
    returncode: int
    stdout: str
    stderr: str


def _shared_tmp(factory: pytest.TempPathFactory) -> Path:
    """A folder all xdist workers of this run share (the parent of each worker's base temp)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def shipped_report(tmp_path_factory: pytest.TempPathFactory) -> ShippedReport:
    """The report from the shipped release alone, built once per test run and shared (the report, the
    explorer page and the vocabulary tests all read it): no model, a cache folder that must stay unmade,
    and no BLINDMCQ_ variable of the caller's."""
    root = _shared_tmp(tmp_path_factory) / "shipped-report"
    root.mkdir(exist_ok=True)
    scratch, record = root / "scratch", root / "run.json"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds it, the other waits and reads it
        if not record.is_file():
            scratch.mkdir()
            env = {k: v for k, v in os.environ.items() if not k.startswith("BLINDMCQ_")}
            env["PYTHONPATH"] = str(ROOT / "src")
            env["BLINDMCQ_CACHE"] = str(scratch / "cache")  # the local model would be looked for here
            done = subprocess.run(
                [sys.executable, "-m", "blindmcq.cli", "report", "--from", str(ROOT / "releases/default"),
                 "--out", "out", "-C", str(ROOT)],
                cwd=scratch, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            run = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
            record.write_text(json.dumps(run), encoding="utf-8")
    run = json.loads(record.read_text(encoding="utf-8"))
    return ShippedReport(out=scratch / "out", scratch=scratch, **run)


@dataclass(frozen=True)
class LexamAudit:
    """One in-process ``blindmcq audit`` of tests/fixtures/audit/lexam_en_80.csv (``--no-header``): its
    output folder, its exit code (-1 and the exception where it raised), what it wrote to stderr (the
    progress of its calls) and what it left in the empty folder it ran in (nothing may be written outside
    ``--out``)."""

    out: Path
    returncode: int
    error: str
    stderr: str
    left_in_cwd: list[str]


LEXAM_AUDIT = ROOT / "tests" / "fixtures" / "audit" / "lexam_en_80.csv"


@pytest.fixture(scope="session")
def lexam_audit(tmp_path_factory: pytest.TempPathFactory) -> LexamAudit:
    """The audit of the LEXam fixture, built once per test run and shared by every worker (the audit's
    own tests and the vocabulary tests read it)."""
    root = _shared_tmp(tmp_path_factory) / "lexam-audit"
    root.mkdir(exist_ok=True)
    out, cwd, record = root / "out", root / "cwd", root / "run.json"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds it, the other waits and reads it
        if not record.is_file():
            from blindmcq.cli.audit import main

            cwd.mkdir()
            old = Path.cwd()
            os.chdir(cwd)
            stderr = io.StringIO()
            try:
                with contextlib.redirect_stderr(stderr):
                    code, error = main([str(LEXAM_AUDIT), "--no-header", "--out", str(out)]), ""
            except (Exception, SystemExit) as exc:  # kept: every test reading it fails naming it
                code, error = -1, repr(exc)
            finally:
                os.chdir(old)
            run = {"returncode": code, "error": error, "stderr": stderr.getvalue(),
                   "left_in_cwd": sorted(p.name for p in cwd.iterdir())}  # fmt: skip
            record.write_text(json.dumps(run), encoding="utf-8")
    run = json.loads(record.read_text(encoding="utf-8"))
    return LexamAudit(out=out, **run)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Debian chromium driven by selenium (the explorer's and the review page's tests); skips,
    saying what to install, where it is missing."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.skip("no browser: install Debian's chromium and chromium-driver (see .ci/run)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1366,900",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
