"""The release folder: the default run's, shipped in ``releases/default``, rebuilds the report, no model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blindmcq.cli.report import main
from blindmcq.reporting.bundle import (
    MANIFEST,
    REQUIRED,
    BundleError,
    check_commit,
    export_bundle,
    verify_bundle,
)
from blindmcq.reporting.release import locked_outputs

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "releases" / "default"


def test_shipped_release_is_the_committed_run():
    manifest = verify_bundle(SHIPPED)
    assert manifest["dvc_outputs"] == locked_outputs(REPO), (
        "releases/default is not the run dvc.lock pins: after `dvc repro`, "
        "`blindmcq report --export releases/default` and commit it"
    )
    assert (SHIPPED / "reports/metrics.json").read_bytes() == (REPO / "reports/metrics.json").read_bytes()
    assert check_commit(SHIPPED, manifest, REPO) == manifest["commit"]  # each file what its commit pins
    assert all(rel in manifest["files"] for rel in REQUIRED)
    size = sum(f["bytes"] for f in manifest["files"].values())
    assert size < 1_500_000, f"the shipped release grew to {size:,} bytes"


@pytest.mark.slow
def test_report_from_the_shipped_release_reproduces_metrics_byte_for_byte(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLINDMCQ_")}
    env["PYTHONPATH"] = str(REPO / "src")
    env["BLINDMCQ_CACHE"] = str(tmp_path / "cache")  # the local model would be looked for here
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "blindmcq.cli",
            "report",
            "--from",
            str(SHIPPED),
            "--out",
            "look",
            "-C",
            str(REPO),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "byte-identical to the released run's reports/metrics.json" in done.stdout
    out = tmp_path / "look"
    assert (out / "metrics.json").read_bytes() == (REPO / "reports/metrics.json").read_bytes()
    for table in ("tables/tables.md", "report.md", "html/index.html"):
        assert (out / table).is_file(), table
    assert {p.name for p in (out / "figures").glob("*.png")}, "no figures rebuilt"
    assert not (tmp_path / "cache").exists() and not (tmp_path / ".cache").exists()  # no model asked
    assert sorted(p.name for p in tmp_path.iterdir()) == ["look"]  # the scratch workspace is gone


def test_a_changed_file_is_refused_and_named(tmp_path, capsys):
    copy = tmp_path / "rel"
    shutil.copytree(SHIPPED, copy)
    target = copy / "results/predictions/predictions.parquet"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    assert main(["--from", str(copy), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(target) in err and "changed after the release; refused" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda m: m.pop("format"), "format is not 'blindmcq-release'"),
        (lambda m: m.update(version=99), "version 99 unknown"),
        (lambda m: m["files"].pop("results/gate/gate.json"), "files lists no 'results/gate/gate.json'"),
        (lambda m: m["files"].update({"../x": {"md5": "0"}}), "leaves the release folder"),
    ],
)
def test_a_bad_manifest_stops_naming_it(tmp_path, capsys, edit, says):
    copy = tmp_path / "rel"
    shutil.copytree(SHIPPED, copy)
    manifest = json.loads((copy / MANIFEST).read_text(encoding="utf-8"))
    edit(manifest)
    (copy / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["--from", str(copy)]) == 2
    err = capsys.readouterr().err
    assert str(copy / MANIFEST) in err and says in err


def test_no_manifest(tmp_path, capsys):
    assert main(["--from", str(tmp_path)]) == 2
    assert f"{tmp_path / MANIFEST}: not found" in capsys.readouterr().err


def test_export_copies_what_the_report_needs_and_refuses_a_stale_workspace(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(SHIPPED, root)  # the release folder keeps the project's own paths
    (root / MANIFEST).unlink()
    manifest = export_bundle(root, tmp_path / "out")
    shipped = json.loads((SHIPPED / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["files"] == shipped["files"]
    assert verify_bundle(tmp_path / "out")["files"] == shipped["files"]

    lock = {
        "schema": "2.0",
        "stages": {"report": {"outs": [{"path": "reports/metrics.json", "md5": "0" * 32}]}},
    }
    (root / "dvc.lock").write_text(yaml.safe_dump(lock), encoding="utf-8")
    with pytest.raises(BundleError, match=r"reports/metrics\.json: not the output dvc\.lock pins"):
        export_bundle(root, tmp_path / "out2")
    (root / "results/gate/gate.json").unlink()
    with pytest.raises(BundleError, match=r"gate\.json: not found; run `dvc repro`"):
        export_bundle(root, tmp_path / "out3")


def test_a_run_that_read_predictions_from_elsewhere_is_not_exported(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(SHIPPED, root)
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["analysis"]["extra_predictions"] = ["../elsewhere/preds.jsonl"]
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    with pytest.raises(BundleError, match=r"params\.yaml: analysis\.extra_predictions names files"):
        export_bundle(root, tmp_path / "out")
