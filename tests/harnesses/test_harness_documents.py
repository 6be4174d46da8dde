"""The exported documents are the probe's presentations (no harness needed), and bad input to the two
commands stops with one line naming the file (exit 2)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from harness_support import small_export

from blindmcq.backends.base import ModelResponse
from blindmcq.cli import export as export_cli
from blindmcq.cli import importing
from blindmcq.config.schema import HeuristicModel, Protocol, Reasoning
from blindmcq.errors import ConfigError, InputError
from blindmcq.harnesses.documents import build_documents, presentation_of, record_of
from blindmcq.labels import label_symbols_by_scheme
from blindmcq.tasks.probe import build_jobs


def test_documents_are_the_probes_presentations_in_its_order(default_sample, probe_config):
    docs = build_documents(default_sample, probe_config, "lm-eval")
    _, jobs = build_jobs(
        default_sample,
        model_cfg=HeuristicModel(name="constant-a", backend="heuristic", strategy="constant"),
        setup=probe_config.setup,
    )
    assert len(docs) == len(jobs) == 60 * 13  # 8 blind orders, 1 full, 4 forced slots
    for doc, job in zip(docs, jobs, strict=True):
        assert presentation_of(doc, file="t") == job.presentation
    assert len({d["doc_key"] for d in docs}) == len(docs)
    # lm-eval scores the labels after the answer cue, as blindmcq scores a local base model
    assert all(d["context"].endswith("\nВідповідь:") and d["choices"] == ["A", "B", "C", "D"] for d in docs)
    # across the 2N blind orders each option stands in each slot exactly twice
    for item in default_sample[:5]:
        mine = [d for d in docs if d["item_id"] == item.id and d["condition"] == "blind"]
        blind = [d for d in mine if not d["order_id"].startswith("forced")]
        assert Counter((slot, o) for d in blind for slot, o in enumerate(d["order"])) == {
            (s, o): 2 for s in range(4) for o in range(4)
        }
        forced = [d for d in docs if d["item_id"] == item.id and d["order_id"].startswith("forced")]
        assert [d["key_slot"] for d in forced] == [0, 1, 2, 3]


def test_an_answer_is_scored_as_the_probe_scores_it(default_sample, probe_config):
    doc = build_documents(default_sample[:1], probe_config, "inspect")[1]  # blind rot1
    symbols = label_symbols_by_scheme(probe_config.label_schemes)
    key = doc["key_slot"]
    right = record_of(doc, ModelResponse(text=f"Відповідь: {'ABCD'[key]}"), model="m", backend="inspect",
                      symbols=symbols, time=None, file="log")  # fmt: skip
    assert (right.picked_slot, right.correct, right.parse_status) == (key, True, "ok")
    assert right.picked_option == doc["order"][key]
    cyrillic = record_of(doc, ModelResponse(text="Б"), model="m", backend="inspect", symbols=symbols,
                         time=None, file="log")  # fmt: skip
    assert (cyrillic.picked_slot, cyrillic.correct, cyrillic.parse_status) == (None, False, "other_scheme")
    tie = record_of(doc, ModelResponse(text="A", choice_logprobs=[-1.0, -1.0, -2.0, -3.0]), model="m",
                    backend="lm-eval", symbols=symbols, time=None, file="log")  # fmt: skip
    assert (tie.picked_slot, tie.parse_status) == (None, "tie")


def test_md_and_reasoning_that_a_harness_cannot_score_are_refused(default_sample, probe_config):
    md = replace(probe_config, protocol=Protocol(name="md", extraction="match", labels="dash"))
    with pytest.raises(ConfigError, match="Matched-and-Dashed"):
        build_documents(default_sample[:1], md, "inspect")
    cot = replace(probe_config, reasoning=Reasoning(name="step_by_step", max_tokens=512))
    with pytest.raises(ConfigError, match="direct"):
        build_documents(default_sample[:1], cot, "lm-eval")


def test_export_writes_the_task_and_manifest(bank_items, tmp_path):
    out = tmp_path / "task"
    assert export_cli.main(["lm-eval", str(bank_items), "--out", str(out), "--sample", "3"]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["documents"] == 3 * 13 and len(manifest["probed_items"]) == 3
    assert manifest["config"]["prompt"] == "original" and manifest["symbols"]["latin"][:4] == list("ABCD")
    lines = (out / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 39 and json.loads(lines[0])["item_id"] == manifest["probed_items"][0]
    task = (out / "blindmcq_probe.yaml").read_text(encoding="utf-8")
    assert "output_type: multiple_choice" in task and str((out / "documents.jsonl").resolve()) in task


def test_export_of_any_bank_gives_the_audits_ids(repo_root, tmp_path):
    bank = repo_root / "tests/fixtures/audit/lexam_en_80.csv"
    out = tmp_path / "lexam"
    args = ["inspect", str(bank), "--no-header", "--out", str(out), "--sample", "all", "--prompt", "english"]
    assert export_cli.main(args) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["documents"] == 80 * 13 and manifest["probed_items"][0].startswith("audit-")
    assert (out / "blindmcq_probe.py").read_text(encoding="utf-8").count("blindmcq_choice(symbols)") == 1


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["lm-eval", "{missing}", "--out", "{out}"], "missing.jsonl"),
        (["lm-eval", "{bank}", "--out", "{out}", "--sample", "9999"], "--sample"),
        (["inspect", "{bank}", "--out", "{out}", "--labels", "klingon"], "klingon"),
    ],
)
def test_bad_export_input_is_one_line_and_exit_2(argv, names, bank_items, tmp_path, capsys):
    fill = {"missing": str(tmp_path / "missing.jsonl"), "out": str(tmp_path / "o"), "bank": str(bank_items)}
    assert export_cli.main([a.format(**fill) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and names in err and err.startswith("blindmcq export: error:")


def test_bad_import_input_is_one_line_naming_the_file_and_row(tmp_path, capsys):
    export = ["--export", str(small_export(tmp_path, "lm-eval", n=1))]
    samples = tmp_path / "samples_blindmcq_probe_x.jsonl"
    samples.write_text('{"doc_id": 0, "doc": {"a": 1}}\n', encoding="utf-8")
    capsys.readouterr()
    assert importing.main(["lm-eval", str(samples), "--out", str(tmp_path / "p.parquet"), *export]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"file {samples}, line 1" in err and "blindmcq document" in err
    samples.write_text("not json\n", encoding="utf-8")
    assert importing.main(["lm-eval", str(samples), *export]) == 2
    assert "line 1: not valid JSON" in capsys.readouterr().err


def test_import_checks_every_log_row(default_sample, probe_config, tmp_path):
    docs = build_documents(default_sample[:1], probe_config, "lm-eval")
    samples = tmp_path / "samples.jsonl"
    rows = [{"doc_id": i, "doc": d, "filtered_resps": [["-1.0", "False"]] * 3} for i, d in enumerate(docs)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    from blindmcq.harnesses.lm_eval import read_samples

    with pytest.raises(InputError, match=r"line 1: expected 4 log-likelihoods"):
        read_samples(samples, model="m", symbols={})
    Path(samples).write_text(json.dumps({**rows[0], "filtered_resps": [["-1", "F"]] * 4}) * 1 + "\n" +
                             json.dumps({**rows[0], "filtered_resps": [["-1", "F"]] * 4}) + "\n",
                             encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError, match=r"line 2: document .* appears twice"):
        read_samples(samples, model="m", symbols={})
