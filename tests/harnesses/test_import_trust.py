"""An import trusts nothing the log says about the bank: every document is checked against the export's
manifest (the item, its option texts, where its key sits), and every malformed field stops with one line
naming the file, the record and the field (exit 2), before anything is written. Logs are written here in
lm-eval's samples format and as inspect_ai's log objects (its reader stood in for)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest
from harness_support import small_export
from test_import_belongs import fake_inspect, log_of, samples

from blindmcq.cli import importing


def docs_of(export: Path) -> list[dict]:
    lines = (export / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def lm_eval_samples(path: Path, docs: list[dict], slot: int = 0) -> Path:
    """lm-eval's ``--log_samples`` rows of a model whose log-likelihood is highest for ``slot``."""
    rows = [
        {"doc_id": i, "doc": d,
         "filtered_resps": [[-1.0 if s == slot else -5.0, False] for s in range(len(d["choices"]))]}
        for i, d in enumerate(docs)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def run_import(
    harness: str, log: Path, export: Path, tmp_path: Path, capsys, *extra: str, about: Path | None = None
) -> tuple[int, str]:
    """Exit code and stderr of ``blindmcq import``; a refusal is one line naming ``about`` (the log)."""
    capsys.readouterr()
    out = tmp_path / "p.jsonl"
    argv = [harness, str(log), "--out", str(out), "--model", "m", "--export", str(export), *extra]
    code = importing.main(argv)
    err = capsys.readouterr().err
    if code == 2:
        assert (
            err.count("\n") == 1
            and err.startswith("blindmcq import: error:")
            and f"file {about or log}" in err
        )
        assert not out.exists()  # nothing half-written
    return code, err


def blind_accuracy(path: Path) -> float:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    blind = [r["correct"] for r in rows if r["condition"] == "blind"]
    return sum(blind) / len(blind)


@pytest.mark.parametrize("audit", [False, True])
def test_a_key_slot_moved_to_the_models_pick_is_refused(tmp_path, capsys, audit) -> None:
    export = small_export(tmp_path, "lm-eval")
    docs = docs_of(export)
    log = lm_eval_samples(tmp_path / "samples_blindmcq_probe_1.jsonl", docs)
    assert run_import("lm-eval", log, export, tmp_path, capsys)[0] == 0
    assert blind_accuracy(tmp_path / "p.jsonl") == 0.25  # slot 0 holds the key in 1 of 4 orders
    (tmp_path / "p.jsonl").unlink()
    moved = [{**d, "key_slot": 0, "target_label": d["label_strings"][0]} for d in docs]
    first = next(i for i, d in enumerate(docs) if d["key_slot"] != 0)
    extra = ["--audit", str(tmp_path / "audit")] if audit else []
    code, err = run_import("lm-eval", lm_eval_samples(log, moved), export, tmp_path, capsys, *extra)
    assert code == 2
    assert (
        f"line {first + 1}:" in err and f"item {docs[first]['item_id']!r}" in err and "field key_slot" in err
    )
    assert not (tmp_path / "audit").exists()


def test_an_inspect_key_slot_moved_is_refused(tmp_path, monkeypatch, capsys) -> None:
    export = small_export(tmp_path, "inspect")
    logged = samples(export)
    for sample in logged:
        sample.metadata = {**sample.metadata, "key_slot": 0}
    fake_inspect(monkeypatch, log_of("success", logged))
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    code, err = run_import("inspect", log, export, tmp_path, capsys, "--audit", str(tmp_path / "audit"))
    assert code == 2 and "field key_slot" in err and "sample " in err


@pytest.mark.parametrize(
    ("field", "value", "names"),
    [
        ("item_id", "elsewhere-x-0", "item_id 'elsewhere-x-0' is not in the exported bank"),
        ("option_texts", ["w", "x", "y", "z"], "field option_texts differ"),
    ],
)
def test_documents_of_another_bank_are_refused_without_items_or_audit(
    tmp_path, capsys, field, value, names
) -> None:
    export = small_export(tmp_path, "lm-eval")
    docs = docs_of(export)
    docs[2] = {**docs[2], field: value}
    log = lm_eval_samples(tmp_path / "samples_x.jsonl", docs)
    code, err = run_import("lm-eval", log, export, tmp_path, capsys)
    assert code == 2 and "line 3:" in err and names in err


def test_an_edited_items_file_or_an_old_manifest_is_refused(tmp_path, capsys) -> None:
    export = small_export(tmp_path, "lm-eval")
    log = lm_eval_samples(tmp_path / "samples_x.jsonl", docs_of(export))
    items = export / "items.jsonl"
    original = items.read_bytes()
    items.write_bytes(original.replace(b"opt a0", b"opt z0"))
    code, err = run_import("lm-eval", log, export, tmp_path, capsys, about=items)
    assert code == 2 and "items_sha256" in err
    items.write_bytes(original)
    manifest = json.loads((export / "manifest.json").read_text(encoding="utf-8"))
    del manifest["keys"]
    (export / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, err = run_import("lm-eval", log, export, tmp_path, capsys, about=export / "manifest.json")
    assert code == 2 and "re-export" in err


@pytest.mark.parametrize(
    ("field", "value", "names"),
    [
        ("index", "abc", "field index is 'abc', not an integer"),
        ("choices", [], "field choices is [], not 4 label strings"),
        ("max_tokens", "lots", "field max_tokens is 'lots', not an integer"),
        ("key_slot", "0", "field key_slot is '0', not an integer or null"),
        ("n_options", "four", "field n_options is 'four'"),
        ("order", ["a", 1, 2, 3], "field order is"),
        ("temperature", "hot", "field temperature is 'hot', not a number"),
    ],
)
def test_a_malformed_lm_eval_field_is_one_line_naming_record_and_field(
    tmp_path, capsys, field, value, names
) -> None:
    export = small_export(tmp_path, "lm-eval")
    docs = docs_of(export)
    docs[1] = {**docs[1], field: value}
    log = lm_eval_samples(tmp_path / "samples_x.jsonl", docs)
    code, err = run_import("lm-eval", log, export, tmp_path, capsys)
    assert code == 2 and "line 2: sample 1:" in err and names in err


def test_a_malformed_inspect_field_names_the_sample(tmp_path, monkeypatch, capsys) -> None:
    export = small_export(tmp_path, "inspect")
    logged = samples(export)
    logged[1].metadata = {**logged[1].metadata, "index": "abc"}
    fake_inspect(monkeypatch, log_of("success", logged))
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    code, err = run_import("inspect", log, export, tmp_path, capsys)
    assert code == 2 and f"sample {logged[1].id} (epoch 1): field index is 'abc'" in err


def test_deeply_nested_json_is_one_line_not_a_recursion_error(tmp_path, capsys) -> None:
    export = small_export(tmp_path, "lm-eval")
    log = lm_eval_samples(tmp_path / "samples_x.jsonl", docs_of(export))
    deep = '{"doc": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    log.write_text(log.read_text(encoding="utf-8") + deep, encoding="utf-8")
    code, err = run_import("lm-eval", log, export, tmp_path, capsys)
    assert code == 2 and f"line {len(docs_of(export)) + 1}: JSON nested too deeply" in err
    results = tmp_path / "results_2026.json"  # the export named by lm-eval's results file
    results.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    capsys.readouterr()
    assert importing.main(["lm-eval", str(log), "--out", str(tmp_path / "q.jsonl"), "--model", "m"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(results) in err and "nested too deeply" in err


def test_an_inspect_log_whose_samples_all_errored_is_refused_even_with_audit(
    tmp_path, monkeypatch, capsys
) -> None:
    export = small_export(tmp_path, "inspect")
    logged = samples(export)
    failed = types.SimpleNamespace(message="rate limited")
    for sample in logged:
        sample.error = failed
        sample.output = types.SimpleNamespace(completion="", usage=None, choices=[], error=None)
    fake_inspect(monkeypatch, log_of("success", logged))
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    code, err = run_import("inspect", log, export, tmp_path, capsys, "--audit", str(tmp_path / "audit"))
    assert code == 2 and f"every one of its {len(logged)} samples errored" in err
    assert "field error: rate limited" in err and not (tmp_path / "audit").exists()
    logged[0].error = None  # one answer is enough to import (the errored calls are rows of their own)
    assert run_import("inspect", log, export, tmp_path, capsys)[0] == 0
