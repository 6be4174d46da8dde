"""The items a sweep or preview reads were built from the dataset config it records and from the bank files
as they are now (a fingerprint in the corpus output, compared on read), else the corpus is rebuilt."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from blindmcq import cli
from blindmcq.answers.predictions import read_predictions
from blindmcq.config.schema import validate, validate_group
from blindmcq.datasets.fingerprint import FINGERPRINT_NAME, dataset_fingerprint
from blindmcq.datasets.items import Item, read_items, write_items
from blindmcq.datasets.registry import bank_digests, bank_files, corpus_mismatch
from blindmcq.stages.corpus import build_corpus

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"


def _compose(overrides: list[str]) -> dict:
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    params = OmegaConf.to_container(cfg, resolve=True)
    validate(params, file="test overrides")
    assert isinstance(params, dict)
    return params


OLD = ["dataset=nonsenseqa", "dataset.n_test=12", "dataset.n_fewshot=0"]  # seed 0: the existing corpus
NEW = ["dataset=nonsenseqa", "dataset.n_test=30", "dataset.seed=7", "dataset.n_fewshot=0"]
RUN = ["model=longest", "model@gate_model=longest", "condition=blind", "probe.sample=null", "tracking=off"]


def test_the_corpus_stage_writes_the_fingerprint_of_its_config(tmp_path: Path) -> None:
    params = _compose(OLD)
    build_corpus(params["dataset"], tmp_path)
    record = json.loads((tmp_path / FINGERPRINT_NAME).read_text(encoding="utf-8"))
    assert record["fingerprint"] == dataset_fingerprint(params["dataset"])
    assert corpus_mismatch(validate(params, file=None), tmp_path / "items.jsonl") is None
    assert "another dataset config" in str(
        corpus_mismatch(validate(_compose(NEW), file=None), tmp_path / "items.jsonl")
    )
    (tmp_path / FINGERPRINT_NAME).unlink()
    assert "no fingerprint.json" in str(
        corpus_mismatch(validate(params, file=None), tmp_path / "items.jsonl")
    )


def test_a_sweep_that_overrides_the_dataset_probes_its_own_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from blindmcq.sweep import sweep_job

    monkeypatch.chdir(tmp_path)
    build_corpus(_compose(OLD)["dataset"], tmp_path / "results/corpus")
    params = _compose([*NEW, *RUN, f"probe.cache={tmp_path}/c.sqlite"])
    with caplog.at_level(logging.WARNING):
        sweep_job(params, tmp_path / "job", None)
    assert "another dataset config" in caplog.text
    calls = read_predictions(tmp_path / "job/predictions.parquet")
    probed = set(calls["item_id"].astype(str))
    expected = {item.id for item in read_items(tmp_path / "job/corpus/items.jsonl")}
    assert len(probed) == 30 and probed == expected  # n_test 30, as the run records, not the old 12
    built = json.loads((tmp_path / "job/corpus" / FINGERPRINT_NAME).read_text(encoding="utf-8"))
    assert built["fingerprint"] == dataset_fingerprint(params["dataset"])
    assert len(read_items(tmp_path / "results/corpus/items.jsonl")) == 12  # the pipeline's corpus untouched


def test_a_sweep_on_the_corpus_config_uses_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindmcq.sweep import sweep_job

    monkeypatch.chdir(tmp_path)
    build_corpus(_compose(OLD)["dataset"], tmp_path / "results/corpus")
    sweep_job(_compose([*OLD, *RUN, f"probe.cache={tmp_path}/c.sqlite"]), tmp_path / "job", None)
    assert not (tmp_path / "job/corpus").exists()  # nothing rebuilt
    assert read_predictions(tmp_path / "job/predictions.parquet")["item_id"].nunique() == 12


def test_preview_of_another_dataset_config_reads_that_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    build_corpus(_compose(OLD)["dataset"], tmp_path / "results/corpus")
    build_corpus(_compose(NEW)["dataset"], tmp_path / "new")  # what the preview should show
    old = {item.id: set(item.options) for item in read_items(tmp_path / "results/corpus/items.jsonl")}
    new = {item.id: set(item.options) for item in read_items(tmp_path / "new/items.jsonl")}
    assert (
        cli.main(["preview", *NEW, "model=longest", "probe.sample=null", "--items", "2", "--conf", str(CONF)])
        == 0
    )
    out = capsys.readouterr()
    assert "another dataset config" in out.err
    lines = [json.loads(line) for line in out.out.splitlines()]
    assert lines
    for line in lines:
        shown = set(line["wire"]["option_texts"])
        assert shown == new[line["item_id"]] and shown != old.get(line["item_id"])


def _bank(path: Path, stem: str) -> None:
    items = [Item(id=f"t-b-{i}", source="t", bank="b", number=i, question=f"{stem} {i}?",
                  options=("x", "yy", "zzz", "w"), key=i % 4) for i in range(1, 5)]  # fmt: skip
    write_items(path, items)


def test_a_bank_file_edited_under_the_same_config_is_noticed_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from blindmcq.sweep import corpus_for

    monkeypatch.chdir(tmp_path)
    params = _compose(OLD)
    params["dataset"] = {"name": "tiny", "loader": "items", "path": "bank.jsonl"}
    _bank(tmp_path / "bank.jsonl", "Old question")
    build_corpus(params["dataset"], tmp_path / "results/corpus")
    items_path = tmp_path / "results/corpus/items.jsonl"
    record = json.loads((tmp_path / "results/corpus" / FINGERPRINT_NAME).read_text(encoding="utf-8"))
    assert record["files"] == bank_digests(validate_group("dataset", params["dataset"])) and list(
        record["files"]
    ) == ["bank.jsonl"]
    assert corpus_mismatch(validate(params, file=None), items_path) is None

    _bank(tmp_path / "bank.jsonl", "New question")  # same config, other bytes
    reason = corpus_mismatch(validate(params, file=None), items_path)
    assert reason is not None and "bank.jsonl changed since" in reason
    with caplog.at_level(logging.WARNING):
        rebuilt = corpus_for(params, tmp_path / "job/corpus", who="sweep")
    assert "bank.jsonl changed since" in caplog.text
    assert {item.question for item in read_items(rebuilt)} == {f"New question {i}?" for i in range(1, 5)}
    assert all(item.question.startswith("Old") for item in read_items(items_path))  # the stale one untouched

    (tmp_path / "bank.jsonl").unlink()
    assert "cannot be read now" in str(corpus_mismatch(validate(params, file=None), items_path))


def test_the_pdf_banks_fingerprint_covers_its_pdfs_and_corrections() -> None:
    dataset = _compose([])["dataset"]
    files = [p.as_posix() for p in bank_files(validate_group("dataset", dataset), REPO)]
    assert any(f.endswith(".pdf") for f in files) and files[-1].endswith("corrections.yaml")
    digests = bank_digests(validate_group("dataset", dataset), REPO)
    assert list(digests) == [Path(f).relative_to(REPO).as_posix() for f in files]
    edited = {**digests, next(iter(digests)): "0" * 64}
    assert dataset_fingerprint(dataset, 0, edited) != dataset_fingerprint(dataset, 0, digests)
    assert dataset_fingerprint(dataset, 0, digests) != dataset_fingerprint(dataset, 0)
