"""The release folder: the default run's, shipped in ``releases/default``, rebuilds the report, no model.

What "the same run" means (docs/cache.md, README "Reproduction"): the commit's own files agree byte for
byte (the release is the run the committed ``dvc.lock`` pins); a run made here, on a CPU whose model
scores may differ in the last bits, has the release's outputs, the model-free ones byte for byte, and
its figures: those resting on model scores within ``SCORE_FIGURE_TOLERANCE``, the rest exactly.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from blindmcq.backends.base import SCORE_FIGURE_TOLERANCE
from blindmcq.cli.report import main
from blindmcq.reporting.bundle import (
    MANIFEST,
    REQUIRED,
    BundleError,
    check_commit,
    export_bundle,
    verify_bundle,
)
from blindmcq.reporting.markdown import MODEL_FREE_FIGURES
from blindmcq.reporting.release import locked_outputs

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "releases" / "default"
# the one place a backend is made: a stage whose code reaches it may ask a model
MAKES_BACKENDS = "src/blindmcq/backends/registry.py"


def committed(path: str) -> bytes | None:
    """``path`` as the checked-out commit holds it (None outside a git checkout, or if it has none)."""
    done = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=REPO, capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def model_free_outputs(dvc_yaml: Path) -> set[str]:
    """The outputs of the stages no model reaches: stages whose code cannot build a backend and that read
    no output of a stage that can (``dvc.yaml``'s stages are in pipeline order)."""
    stages = yaml.safe_load(dvc_yaml.read_text(encoding="utf-8"))["stages"]
    touched: set[str] = set()  # outputs a model reaches
    free: set[str] = set()
    for stage in stages.values():
        deps = [str(d) for d in stage.get("deps", [])]
        outs = [
            next(iter(o)) if isinstance(o, dict) else str(o)
            for o in stage.get("outs", []) + stage.get("metrics", [])
        ]
        reached = MAKES_BACKENDS in deps or any(d == t or d.startswith(f"{t}/") or t.startswith(f"{d}/")
                                                for d in deps for t in touched)  # fmt: skip
        (touched if reached else free).update(outs)
    return free


def test_shipped_release_is_the_committed_run(tmp_path):
    """The commit's files agree: the release is the run the committed dvc.lock pins, and its metrics are
    the committed reports/metrics.json. Both are read from git, so a run made here does not enter."""
    manifest = verify_bundle(SHIPPED)
    lock = committed("dvc.lock")
    if lock is None:
        pytest.skip("not a git checkout: the committed dvc.lock cannot be read (the working-tree check runs)")
    head = tmp_path / "head"
    head.mkdir()
    (head / "dvc.lock").write_bytes(lock)
    listed = subprocess.run(["git", "ls-tree", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    for line in listed.stdout.splitlines():  # "mode type hash<TAB>name": the *.dvc files at the root
        kind, name = line.split()[1], line.split("\t", 1)[1]
        if kind == "blob" and name.endswith(".dvc"):
            (head / name).write_bytes(committed(name) or b"")
    assert manifest["dvc_outputs"] == locked_outputs(head), (
        "releases/default is not the run dvc.lock pins: after `dvc repro`, "
        "`blindmcq report --export releases/default` and commit it"
    )
    assert (SHIPPED / "reports/metrics.json").read_bytes() == committed("reports/metrics.json")
    assert check_commit(SHIPPED, manifest, REPO) == manifest["commit"]  # each file what its commit pins
    assert all(rel in manifest["files"] for rel in REQUIRED)
    size = sum(f["bytes"] for f in manifest["files"].values())
    assert size < 1_500_000, f"the shipped release grew to {size:,} bytes"


def test_model_free_outputs_are_the_stages_before_any_model() -> None:
    free = model_free_outputs(REPO / "dvc.yaml")
    assert {"results/inputs.json", "results/corpus", "results/statutes", "results/baselines"} <= free
    assert not free & {"results/predictions", "results/gate", "results/analysis", "reports/metrics.json"}


def run_differences(
    here: dict[str, str], shipped: dict[str, str], ours: dict[str, float], released: dict[str, float]
) -> list[str]:
    """Why the run here (its dvc outputs and metrics) is not the shipped run, one line each: other
    outputs, a model-free output (``model_free_outputs``) not byte-identical, other figures, a model-free
    figure (``MODEL_FREE_FIGURES``) or a non-number not equal, a figure resting on a model farther than
    ``SCORE_FIGURE_TOLERANCE`` from the release's."""
    problems = []
    if set(here) != set(shipped):
        problems.append(f"other outputs: {sorted(set(here) ^ set(shipped))}")
    for path in sorted(model_free_outputs(REPO / "dvc.yaml") & set(here) & set(shipped)):
        if here[path] != shipped[path]:
            problems.append(f"{path}: a model-free output differs from the shipped run's")
    if sorted(ours) != sorted(released):
        problems.append(f"other figures: {sorted(set(ours) ^ set(released))}")
    for key in sorted(set(ours) & set(released)):
        got, want = ours[key], released[key]
        exact = (
            key.startswith(MODEL_FREE_FIGURES) or not isinstance(want, float) or not isinstance(got, float)
        )
        if exact and got != want and not (got != got and want != want):
            problems.append(f"{key}: {got} here, {want} shipped (model-free: must be equal)")
        elif not exact and got != pytest.approx(want, abs=SCORE_FIGURE_TOLERANCE, nan_ok=True):
            problems.append(f"{key}: {got} here, {want} shipped (beyond {SCORE_FIGURE_TOLERANCE:g})")
    return problems


def test_the_run_here_reproduces_the_shipped_run():
    """After `make run` on any machine (or the committed run, as checked out): the same outputs, the
    model-free ones byte for byte; in metrics.json the same figures, those resting on a model within
    SCORE_FIGURE_TOLERANCE of the release's (one CPU's scores differ from another's in the last bits),
    the model-free ones exactly."""
    released = json.loads((SHIPPED / "reports/metrics.json").read_text(encoding="utf-8"))
    assert all(any(k.startswith(p) for k in released) for p in MODEL_FREE_FIGURES)  # each prefix names some
    problems = run_differences(
        locked_outputs(REPO),
        verify_bundle(SHIPPED)["dvc_outputs"],
        json.loads((REPO / "reports/metrics.json").read_text(encoding="utf-8")),
        released,
    )
    assert not problems, "the run here is not the shipped run:\n" + "\n".join(problems)


def test_another_cpus_run_passes_and_a_changed_figure_does_not():
    """As on a CPU whose model scores differ in the last bits (the keys' fluency -3.8259 against the
    shipped -3.826, say): model outputs with other hashes and a score figure 1e-4 away pass;
    a model-free output or figure changed, or a score figure beyond the tolerance, is named."""
    shipped = verify_bundle(SHIPPED)["dvc_outputs"]
    released = json.loads((SHIPPED / "reports/metrics.json").read_text(encoding="utf-8"))
    there = {path: ("0" * 32 if path not in model_free_outputs(REPO / "dvc.yaml") else md5)
             for path, md5 in shipped.items()}  # fmt: skip
    moved = {**released, "rewrite/fluency_keys": released["rewrite/fluency_keys"] + 1e-4}
    assert run_differences(there, shipped, moved, released) == []
    far = {**released, "rewrite/fluency_keys": released["rewrite/fluency_keys"] + 0.01}
    assert [p.split(":")[0] for p in run_differences(there, shipped, far, released)] == [
        "rewrite/fluency_keys"
    ]
    free = {**released, "table2/longest": released["table2/longest"] + 1e-9}
    assert [p.split(":")[0] for p in run_differences(there, shipped, free, released)] == ["table2/longest"]
    corpus = {**there, "results/corpus": "1" * 32}
    assert [p.split(":")[0] for p in run_differences(corpus, shipped, released, released)] == [
        "results/corpus"
    ]
    fewer = {k: v for k, v in released.items() if k != "gap"}
    assert run_differences(there, shipped, fewer, released)[0].startswith("other figures")


def test_report_from_the_shipped_release_reproduces_metrics_byte_for_byte(shipped_report):
    """The report from the release alone (no model) writes the release's own metrics.json, byte for byte."""
    assert shipped_report.returncode == 0, shipped_report.stderr
    assert "byte-identical to the released run's reports/metrics.json" in shipped_report.stdout
    out = shipped_report.out
    assert (out / "metrics.json").read_bytes() == (SHIPPED / "reports/metrics.json").read_bytes()
    for table in ("tables/tables.md", "report.md", "html/index.html"):
        assert (out / table).is_file(), table
    assert {p.name for p in (out / "figures").glob("*.png")}, "no figures rebuilt"
    scratch = shipped_report.scratch
    assert not (scratch / "cache").exists() and not (scratch / ".cache").exists()  # no model asked
    assert sorted(p.name for p in scratch.iterdir()) == ["out"]  # the scratch workspace is gone


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
