"""Imported and extra predictions answer the run's own items, from a finished log, under the metric names
the docs promise. inspect_ai's log reader is stood in for (``inspect_ai.log.read_eval_log``), so these run
without the harness extra."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from blindmcq.cli import export as export_cli
from blindmcq.cli import importing
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import model_config
from blindmcq.datasets.items import Item, write_items
from blindmcq.errors import InputError
from blindmcq.reporting.tracking import comparable_metrics


def fake_inspect(monkeypatch: pytest.MonkeyPatch, log: object) -> None:
    module = types.ModuleType("inspect_ai.log")
    module.read_eval_log = lambda path, header_only=False: log  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "inspect_ai", types.ModuleType("inspect_ai"))
    monkeypatch.setitem(sys.modules, "inspect_ai.log", module)


def exported(tmp_path: Path) -> Path:
    bank = tmp_path / "bank.csv"
    rows = "".join(f"Q{i}?,opt a{i},opt b{i},opt c{i},opt d{i},{'ABCD'[i % 4]}\n" for i in range(4))
    bank.write_text("question,A,B,C,D,answer\n" + rows, encoding="utf-8")
    out = tmp_path / "export"
    assert export_cli.main(["inspect", str(bank), "--out", str(out), "--sample", "all"]) == 0
    return out


def samples(export: Path, answer: str = "A") -> list[object]:
    rows = [json.loads(line) for line in (export / "dataset.jsonl").read_text(encoding="utf-8").splitlines()]
    output = types.SimpleNamespace(completion=answer, usage=None, choices=[], error=None)
    return [types.SimpleNamespace(id=r["id"], epoch=1, metadata=r["metadata"], output=output, error=None,
                                  completed_at=None) for r in rows]  # fmt: skip


def log_of(status: str, samples: list[object], task_file: str | None = None) -> object:
    return types.SimpleNamespace(
        status=status, samples=samples, eval=types.SimpleNamespace(model="mockllm/model", task_file=task_file)
    )


@pytest.mark.parametrize("status", ["started", "cancelled", "error"])
def test_an_unfinished_inspect_log_is_refused_in_one_line(tmp_path, monkeypatch, capsys, status) -> None:
    export = exported(tmp_path)
    fake_inspect(monkeypatch, log_of(status, samples(export)[:3], str(export / "blindmcq_probe.py")))
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    capsys.readouterr()
    assert importing.main(["inspect", str(log), "--out", str(tmp_path / "p.parquet")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"status '{status}'" in err[0] and str(log) in err[0]
    assert not (tmp_path / "p.parquet").exists()


def test_the_model_is_named_by_the_log_and_answers_must_be_the_corpus_items(
    tmp_path, monkeypatch, capsys
) -> None:
    export = exported(tmp_path)
    fake_inspect(monkeypatch, log_of("success", samples(export), str(export / "blindmcq_probe.py")))
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    out = tmp_path / "p.jsonl"
    assert importing.main(["inspect", str(log), "--out", str(out), "--export", str(export)]) == 0
    models = {json.loads(line)["model"] for line in out.read_text(encoding="utf-8").splitlines()}
    assert models == {"mockllm/model"}
    other = tmp_path / "other.jsonl"
    write_items(other, [Item(f"x-y-{i}", "x", "y", i, "q", ("a", "b"), 0) for i in range(60)])
    capsys.readouterr()
    assert (
        importing.main(["inspect", str(log), "--out", str(tmp_path / "q.jsonl"), "--items", str(other)]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "are not in" in err[0] and "(0 shared" in err[0]


def test_metric_names_follow_the_pattern_whatever_the_model_is_called() -> None:
    named = comparable_metrics(
        {
            "blind_acc/mockllm/model/all": 0.5,
            "agreement/mockllm/model": 0.3,
            "blind_acc/longest/accepted": 0.2,
        },
        "mockllm/model",
    )
    assert named == {"blind_acc/all": 0.5, "agreement": 0.3, "panel/longest/blind_acc/accepted": 0.2}
    assert comparable_metrics(named, "mockllm/model") == named  # twice changes nothing


def test_extra_predictions_of_another_bank_stop_the_analysis(tmp_path, monkeypatch) -> None:
    from blindmcq import paths
    from blindmcq.analysis.outputs import load_all_predictions
    from blindmcq.answers.predictions import write_predictions
    from blindmcq.config.files import load_group
    from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe

    setup = PresentationSetup(
        prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
        reasoning=load_group("reasoning", "direct"), condition=load_group("condition", "blind"),
        protocol=load_group("protocol", "sl"),
    )  # fmt: skip

    def probe(prefix: str) -> object:
        items = [
            Item(f"{prefix}-b-{i}", prefix, "b", i, "q", ("aa", "b", "cccc", "d"), i % 4) for i in range(3)
        ]
        return run_probe(
            items,
            model_config(load_model_file("longest")),
            setup,
            EngineSettings(tmp_path / "c.sqlite", progress=False),
        )

    own, extra, alien = tmp_path / "own.parquet", tmp_path / "extra.parquet", tmp_path / "alien.parquet"
    write_predictions(probe("run"), own)
    write_predictions(probe("run"), extra)
    write_predictions(probe("zno"), alien)
    monkeypatch.setattr(paths, "PREDICTIONS", own)
    monkeypatch.setattr(paths, "GATE_DIR", tmp_path / "no-gate")
    corpus = {f"run-b-{i}" for i in range(3)}
    assert len(load_all_predictions([str(extra)], corpus)) == 2 * len(probe("run"))
    with pytest.raises(InputError, match=r"alien\.parquet.*3 of its 3 item ids are not in .*0 shared"):
        load_all_predictions([str(alien)], corpus)


@pytest.mark.parametrize("logged", ["/tmp/runs/qdpv68r5", None])
def test_an_lm_eval_model_named_by_a_folder_or_not_at_all_needs_model(tmp_path, capsys, logged) -> None:
    bank = tmp_path / "bank.csv"
    bank.write_text("question,A,B,C,D,answer\nWhich one is it?,a,b,c,d,A\n", encoding="utf-8")
    export = tmp_path / "export"
    assert export_cli.main(["lm-eval", str(bank), "--out", str(export), "--sample", "all"]) == 0
    docs = [
        json.loads(line) for line in (export / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    out = tmp_path / "out"
    out.mkdir()
    samples_file = out / "samples_blindmcq_probe_2026.jsonl"
    rows = [
        {"doc_id": i, "doc": d, "filtered_resps": [[-1.0, False]] * len(d["choices"])}
        for i, d in enumerate(docs)
    ]
    samples_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if logged is not None:
        results = {"model_name": logged, "config": {"model": "hf"}}
        (out / "results_2026.json").write_text(json.dumps(results), encoding="utf-8")
    capsys.readouterr()
    given = ["--export", str(export)]
    assert importing.main(["lm-eval", str(samples_file), "--out", str(tmp_path / "p.jsonl"), *given]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give --model NAME" in err[0]
    assert (logged or "names no model") in err[0]
    named = tmp_path / "named.jsonl"
    assert (
        importing.main(["lm-eval", str(samples_file), "--out", str(named), "--model", "qwen-7b", *given]) == 0
    )
    assert {json.loads(line)["model"] for line in named.read_text(encoding="utf-8").splitlines()} == {
        "qwen-7b"
    }
