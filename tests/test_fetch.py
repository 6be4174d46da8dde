"""`make data`'s download path against a local HTTP server on 127.0.0.1, and the inputs check."""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from blindmcq.config.schema import validate
from blindmcq.datasets.fetch import Source, check, download, fill, missing_inputs, read_manifest
from blindmcq.errors import InputError

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "tests" / "fixtures" / "samples"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain HTTP server on 127.0.0.1 serving a folder; yields (base URL, folder)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def project(tmp_path: Path, base: str, www: Path, *, corrupt: str | None = None) -> Path:
    """A project root whose manifest points at the server, serving the real-text samples."""
    root = tmp_path / "project"
    root.mkdir()
    files = {}
    for rel in ("ua-customs-exam/questions.json", "lexam/MCQs_test.xlsx"):
        src = SAMPLES / rel
        served = www / rel.replace("/", "_")
        shutil.copyfile(src, served)
        files[rel] = {"sha256": digest(src), "url": f"{base}/{served.name}"}
    if corrupt:
        served = www / corrupt.replace("/", "_")
        served.write_bytes(served.read_bytes()[:-10] + b"tampered!!")
    (root / "data-sources.yaml").write_text(yaml.safe_dump({"files": files}), encoding="utf-8")
    return root


def quiet(lines: list[str]):
    return lines.append


def test_downloads_verify_and_data_appears_whole(tmp_path: Path, server) -> None:
    base, www = server
    root = project(tmp_path, base, www)
    lines: list[str] = []
    report = fill(root, shared=tmp_path / "no-shared", dvc_pull=lambda _: False, log=quiet(lines))
    assert report.filled and not report.missing
    assert "upstream downloads" in report.tried and any("no-shared" in t for t in report.tried)
    for source in read_manifest(root):
        assert digest(root / "data" / source.path) == source.sha256
    # a second run finds data/ intact and touches nothing
    again = fill(root, shared=tmp_path / "no-shared", dvc_pull=lambda _: False, log=quiet(lines))
    assert again.filled and again.tried == ["data/"]


def test_checksum_mismatch_is_a_clear_error_and_nothing_half_written(tmp_path: Path, server) -> None:
    base, www = server
    root = project(tmp_path, base, www, corrupt="lexam/MCQs_test.xlsx")
    lines: list[str] = []
    report = fill(root, shared=tmp_path / "no-shared", dvc_pull=lambda _: False, log=quiet(lines))
    assert not report.filled and report.missing == ["lexam/MCQs_test.xlsx"]
    assert not (root / "data").exists()  # no half-filled data/
    mismatch = [line for line in lines if "checksum mismatch" in line]
    assert mismatch and "lexam_MCQs_test.xlsx" in mismatch[0] and "nothing written" in mismatch[0]
    assert any("the default run needs only defaults/" in line for line in lines)
    staging = root / ".cache" / "blindmcq" / "data-staging"
    assert not (staging / "lexam" / "MCQs_test.xlsx").exists()
    assert not [p for p in staging.rglob("*") if p.name.endswith(".tmp")]  # no temporary left behind
    # the good file waits, verified, for the next run; once the upstream is fixed, data/ appears
    assert (staging / "ua-customs-exam" / "questions.json").is_file()
    shutil.copyfile(SAMPLES / "lexam" / "MCQs_test.xlsx", www / "lexam_MCQs_test.xlsx")
    assert fill(root, shared=tmp_path / "no-shared", dvc_pull=lambda _: False, log=quiet(lines)).filled


def test_download_keeps_an_existing_file_on_mismatch(tmp_path: Path, server) -> None:
    base, www = server
    (www / "f.bin").write_bytes(b"new bytes")
    target = tmp_path / "f.bin"
    target.write_bytes(b"old bytes")
    with pytest.raises(InputError, match=r"f\.bin.*checksum mismatch"):
        download(f"{base}/f.bin", target, Source("f.bin", "0" * 64))
    assert target.read_bytes() == b"old bytes"
    with pytest.raises(InputError, match="download failed"):
        download(f"{base}/absent.bin", target, Source("absent.bin", "0" * 64))


def test_no_network_says_what_it_tried_and_that_defaults_suffice(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "data-sources.yaml").write_text(
        yaml.safe_dump({"files": {"x.json": {"sha256": "0" * 64, "url": "http://127.0.0.1:9/x.json"}}}),
        encoding="utf-8",
    )
    lines: list[str] = []
    report = fill(root, shared=tmp_path / "no-shared", dvc_pull=lambda _: False, log=quiet(lines))
    assert not report.filled and report.missing == ["x.json"] and not (root / "data").exists()
    tried = next(line for line in lines if line.startswith("tried:"))
    assert "no-shared" in tried and "DVC remote" in tried and "upstream downloads" in tried
    assert any("the default run needs only defaults/" in line for line in lines)


def test_shared_copy_comes_first_and_is_verified(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "lexam").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "lexam" / "MCQs_test.xlsx", shared / "lexam" / "MCQs_test.xlsx")
    root = tmp_path / "project"
    root.mkdir()
    sha = digest(SAMPLES / "lexam" / "MCQs_test.xlsx")
    (root / "data-sources.yaml").write_text(
        yaml.safe_dump({"files": {"lexam/MCQs_test.xlsx": {"sha256": sha, "url": "http://127.0.0.1:9/"}}}),
        encoding="utf-8",
    )
    report = fill(root, shared=shared, dvc_pull=lambda _: pytest.fail("no pull needed"), log=lambda _: None)
    assert report.filled and report.tried == ["data/ (absent)", str(shared)]


def test_the_committed_manifest_matches_the_data_readme_copy() -> None:
    sources = {s.path: s for s in read_manifest(REPO)}
    readme = sources["README.md"]
    assert readme.repo_copy and digest(REPO / readme.repo_copy) == readme.sha256
    assert all(len(s.sha256) == 64 for s in sources.values())


def test_a_config_needing_absent_inputs_stops_with_one_line(tmp_path: Path, capsys) -> None:
    params = {
        "dataset": {"loader": "customs", "dep": "data/ua-customs-exam/questions.json"},
        "statutes": {"path": "defaults/statutes/provisions-default.jsonl"},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    assert missing_inputs(validate(params), tmp_path) == [
        ("dataset.dep", "data/ua-customs-exam/questions.json")
    ]
    assert check(tmp_path) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dataset.dep: data/ua-customs-exam/questions.json")
    assert "`make data`" in err[0]
    # the default config needs nothing from data/
    default = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    assert missing_inputs(validate(default), tmp_path) == []


def test_make_data_offline_exits_non_zero_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make data` (`blindmcq data fill`) that filled nothing does not exit 0."""
    from blindmcq.cli import main
    from blindmcq.datasets import fetch

    root = tmp_path / "project"
    root.mkdir()
    (root / "data-sources.yaml").write_text(
        yaml.safe_dump({"files": {"x.json": {"sha256": "0" * 64, "url": "http://127.0.0.1:9/x.json"}}}),
        encoding="utf-8",
    )
    monkeypatch.chdir(root)
    monkeypatch.setattr(fetch, "_dvc_pull", lambda _root: False)
    code = main(["data", "fill", "--shared", str(tmp_path / "no-shared")])
    assert code == 1 and not (root / "data").exists()
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "data/ not filled" in last and "defaults/" in last


def test_make_data_exit_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """0 when data/ is there and intact; 2 when a data/ differs from the manifest, or on a bad manifest."""
    from blindmcq.cli.data import main

    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "x.json").write_bytes(b"{}")
    sha = hashlib.sha256(b"{}").hexdigest()
    manifest = root / "data-sources.yaml"
    manifest.write_text(yaml.safe_dump({"files": {"x.json": {"sha256": sha}}}), encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["fill"]) == 0
    manifest.write_text(yaml.safe_dump({"files": {"x.json": {"sha256": "0" * 64}}}), encoding="utf-8")
    assert main(["fill"]) == 2 and (root / "data" / "x.json").read_bytes() == b"{}"  # never overwritten
    manifest.write_text("files: [", encoding="utf-8")
    capsys.readouterr()
    assert main(["fill"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data manifest" in err[0] and "data-sources.yaml" in err[0]


def _params(root: Path, dep: str) -> None:
    params = {
        "dataset": {"loader": "customs", "dep": dep},
        "statutes": {"path": "defaults/statutes/provisions-default.jsonl"},
    }
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")


def test_the_inputs_stage_stops_with_one_line_or_records_the_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m blindmcq.stages.inputs` (dvc.yaml's first stage): exit 2 and one line when an input
    under data/ is absent, nothing written; else results/inputs.json, the config's inputs by key."""
    from blindmcq.stages.inputs import main

    monkeypatch.chdir(tmp_path)
    _params(tmp_path, "data/ua-customs-exam/questions.json")
    assert main() == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dataset.dep: data/ua-customs-exam/questions.json")
    assert "run `make data`" in err[0] and not (tmp_path / "results").exists()
    _params(tmp_path, "defaults/customs/questions.json")
    assert main() == 0
    assert (tmp_path / "results" / "inputs.json").read_text(encoding="utf-8") == (
        "{\n"
        '  "dataset.dep": "defaults/customs/questions.json",\n'
        '  "statutes.path": "defaults/statutes/provisions-default.jsonl"\n'
        "}\n"
    )
    (tmp_path / "params.yaml").write_text("dataset: {loader: customs, smaple: 1}\n", encoding="utf-8")
    assert main() == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "params.yaml" in err[0]
