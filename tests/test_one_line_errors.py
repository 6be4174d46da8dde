"""Failures of the sweep's and audit's environment are one line naming the file or key,
exit 2; two sweeps launched in the same second write distinct folders; the messages count what is so."""

from __future__ import annotations

import errno
import hashlib
import pickle
import sys
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

REPO = Path(__file__).resolve().parents[1]


def _hydra_dirs() -> tuple[str, str, object]:
    import blindmcq.sweep  # noqa: F401  (registers the token resolver, as `python -m blindmcq.sweep` does)

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        cfg = compose(config_name="config", return_hydra_config=True)
    return str(cfg.hydra.sweep.dir), str(cfg.hydra.run.dir), cfg


def test_two_launches_in_the_same_second_get_distinct_folders() -> None:
    sweep_a, run_a, cfg = _hydra_dirs()
    sweep_b, run_b, _ = _hydra_dirs()
    assert sweep_a.startswith("multirun/") and run_a.startswith("outputs/")
    assert sweep_a != sweep_b and run_a != run_b  # and so distinct MLflow parents, keyed by the folder
    # one launch's jobs see one folder: the value is cached in the config and travels with it (submitit)
    assert str(cfg.hydra.sweep.dir) == sweep_a  # type: ignore[attr-defined]
    assert str(pickle.loads(pickle.dumps(cfg)).hydra.sweep.dir) == sweep_a


@pytest.mark.parametrize(
    ("mode", "override", "named"),
    [
        ("-m", "hydra.sweep.dir=/proc/blindmcq-nope/multirun", "/proc/blindmcq-nope"),  # root cannot either
        (None, "hydra.run.dir={tmp}/a-file/out", "a-file/out: Not a directory"),  # a file where a folder is
        ("-m", "model=no-such-model", "Could not find 'model/no-such-model'"),
    ],
)
def test_hydras_own_failures_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    mode: str | None, override: str, named: str,
) -> None:  # fmt: skip
    from blindmcq.sweep import cli

    (tmp_path / "a-file").write_text("x")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYDRA_FULL_ERROR", "0")
    argv = ["blindmcq.sweep", *([mode] if mode else []), "tracking=off", override.format(tmp=tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as info:
        cli()
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("blindmcq sweep: error: ") and named in err, err
    assert "Traceback" not in err


def test_a_write_whose_error_names_no_file_names_the_target(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from blindmcq.atomic import atomic_path
    from blindmcq.sweep import error_line

    target = tmp_path / "job" / "predictions.parquet"
    with pytest.raises(OSError) as info:
        with atomic_path(target) as tmp:
            pq.write_table(pa.table({"a": [1]}), tmp)
            raise OSError("IOError: No space left on device. Detail: [errno 28]")  # as pyarrow: no filename
    assert info.value.filename == str(target)
    line = error_line(info.value, tmp_path / "job")
    assert line == f"file {target}: IOError: No space left on device. Detail: [errno 28]"
    assert list(target.parent.iterdir()) == []  # nothing half-written is left
    # an errno is kept (and so the OSError subclass)
    with pytest.raises(FileNotFoundError) as found:
        with atomic_path(target):
            raise OSError(errno.ENOENT, "gone")
    assert found.value.filename == str(target)
    # an OSError that names nothing still gives one line, naming the job's folder
    assert error_line(OSError("boom\nmore"), tmp_path) == f"output folder {tmp_path}: boom\\nmore"


@pytest.mark.parametrize("value", ["[x", "{a: [}", "a: b: c", "!!python/object:os.system x"])
def test_audit_with_a_malformed_override_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    from blindmcq.cli.audit import main

    code = main(["dataset=lexam-32", f"dataset.path={value}", "--out", str(tmp_path / "a")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'dataset.path'" in err and "is not a YAML value" in err, err
    assert not (tmp_path / "a").exists()


def test_a_pull_counts_only_the_outputs_that_did_not_arrive(tmp_path: Path) -> None:
    from blindmcq.reporting.pull import diagnose

    metric = b'{"blind_acc": 0.3}\n'
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports/metrics.json").write_bytes(metric)  # cache: false, checked out by git
    (tmp_path / "reports/stale.json").write_bytes(b"{}\n")  # in the clone, but not the pinned bytes
    lock = {"schema": "2.0", "stages": {"report": {"cmd": "x", "outs": [
        {"path": "reports/metrics.json", "md5": hashlib.md5(metric).hexdigest()},
        {"path": "reports/stale.json", "md5": "0" * 32},
        {"path": "results/predictions.parquet", "md5": "1" * 32},
    ]}}}  # fmt: skip
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump(lock))
    problems = diagnose(tmp_path, str(tmp_path / "remote"), tmp_path / "cache")
    assert sorted(p.path for p in problems) == ["reports/stale.json", "results/predictions.parquet"]


def test_the_token_resolver_is_cached_per_config() -> None:
    import blindmcq.sweep  # noqa: F401

    cfg = OmegaConf.create({"a": "${blindmcq_token:}", "b": "${blindmcq_token:}"})
    assert cfg.a == cfg.b and cfg.a.split("-")[0].isdigit()


def test_a_full_cache_disk_in_a_sweep_says_what_was_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import blindmcq.sweep as sweep
    from blindmcq.engine.cache import CacheUnwritable

    lost = "cannot write the response cache (c.sqlite: database or disk is full); 1 paid answer(s) ..."

    def job(*args: object, **kwargs: object) -> None:
        raise CacheUnwritable(lost)

    def full(path: object) -> None:  # the same full disk: scrubbing .hydra/ fails as well
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(sweep, "sweep_job", job)
    monkeypatch.setattr(sweep, "scrub_tree", full)
    monkeypatch.chdir(tmp_path)
    argv = ["blindmcq.sweep", "-m", "tracking=off", f"hydra.sweep.dir={tmp_path}/m"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as info:
        sweep.cli()
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"blindmcq sweep: error: {lost}"  # the job's own error, not the scrub's
