"""Round trip through inspect_ai, offline: export the default sample, evaluate the exported task file with
inspect's ``mockllm/model`` (custom outputs that always answer one slot's label), import the ``.eval`` log,
and compare with blindmcq's own probe by the ``constant-*`` picker: the same rows and the same Table 4.
Then the audit report built from an imported log against ``blindmcq audit``'s own."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from harness_support import answers, own_probe, require, table4

from blindmcq.answers.predictions import read_predictions
from blindmcq.cli import export as export_cli
from blindmcq.cli import importing

# the full suite: each test runs inspect_ai's eval end to end (tens of seconds); the fast suite keeps the
# documents' checks (test_harness_documents.py)
pytestmark = pytest.mark.full


def run_inspect(task_dir: Path, log_dir: Path, answer: str) -> Path:
    """inspect_ai's eval of the exported task file with mockllm always answering ``answer``; the log."""
    require("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def output() -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm/model", content=answer)
        # given usage, mockllm counts no tokens itself (its tokenizer would be downloaded)
        out.usage = ModelUsage(input_tokens=120, output_tokens=1, total_tokens=121)
        return out

    model = get_model("mockllm/model", custom_outputs=(output() for _ in itertools.count()))
    task = task_dir / "blindmcq_probe.py"
    (log,) = inspect_eval(f"{task}@blindmcq_probe", model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, bank_items: Path) -> Path:
    require("inspect_ai")
    task_dir = tmp_path_factory.mktemp("inspect") / "task"
    assert export_cli.main(["inspect", str(bank_items), "--out", str(task_dir)]) == 0  # the default sample
    return task_dir


@pytest.mark.parametrize(("answer", "picker"), [("A", "constant-a"), ("D", "constant-d")])
def test_mockllm_answering_one_slot_equals_blindmcqs_own_probe(
    answer, picker, exported, default_sample, probe_config, tmp_path
):
    log = run_inspect(exported, tmp_path / "logs", answer)
    out = tmp_path / "imported.parquet"
    assert importing.main(["inspect", str(log), "--out", str(out), "--model", picker]) == 0
    imported = read_predictions(out)
    own = own_probe(default_sample, probe_config, picker, tmp_path / "cache.sqlite")
    assert len(imported) == len(own) == 780
    assert answers(imported).equals(answers(own))
    # the same text as the constant heuristic gives, and the usage inspect logged
    assert (imported["raw_response"] == own["raw_response"]).all()
    assert set(imported["input_tokens"]) == {120} and set(imported["backend"]) == {"inspect"}
    assert table4(imported, default_sample, picker) == table4(own, default_sample, picker)
    # inspect's own choice() scorer counted what the import counts (the solver marks blindmcq's parse)
    from inspect_ai.log import read_eval_log

    accuracy = read_eval_log(str(log)).results.scores[0].metrics["accuracy"].value
    assert accuracy == pytest.approx(float(imported["correct"].mean()))


def test_answers_in_another_scheme_are_recorded_not_mapped(exported, tmp_path):
    log = run_inspect(exported, tmp_path / "logs", "Відповідь: Б")
    out = tmp_path / "cyrillic.jsonl"
    assert importing.main(["inspect", str(log), "--out", str(out)]) == 0
    imported = read_predictions(out)
    assert set(imported["parse_status"]) == {"other_scheme"} and not imported["correct"].any()
    assert set(imported["model"]) == {"mockllm/model"}  # the model inspect logged, without --model
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["schema_version"] == 1


def test_the_audit_report_from_an_imported_log_equals_blindmcq_audits_own(repo_root, tmp_path):
    """Export an English bank the way ``blindmcq audit`` reads it, answer every call "A" in inspect,
    import with ``--audit``: Table 4 and the headline metrics equal the audit's own run of constant-a."""
    from blindmcq.auditing.audit import AUDIT_GROUPS, Mapping, run_audit
    from blindmcq.config.files import load_groups, load_model_file
    from blindmcq.config.schema import model_config

    bank = repo_root / "tests/fixtures/audit/lexam_en_80.csv"
    task_dir = tmp_path / "task"
    argv = ["inspect", str(bank), "--no-header", "--out", str(task_dir), "--sample", "all",
            "--prompt", "english"]  # fmt: skip
    assert export_cli.main(argv) == 0
    log = run_inspect(task_dir, tmp_path / "logs", "A")
    audit = tmp_path / "imported-audit"
    out = tmp_path / "p.parquet"
    assert (
        importing.main(
            ["inspect", str(log), "--out", str(out), "--model", "constant-a", "--audit", str(audit)]
        )
        == 0
    )
    own = tmp_path / "own-audit"
    run_audit(bank, own, Mapping(header=False), model=model_config(load_model_file("constant-a")),
              configs=load_groups(AUDIT_GROUPS), prompt="english")  # fmt: skip
    for table in ("table4", "table3", "gate"):
        assert (audit / "tables" / f"{table}.md").read_text() == (own / "tables" / f"{table}.md").read_text()
    theirs = json.loads((audit / "metrics.json").read_text())
    ours = json.loads((own / "metrics.json").read_text())
    for key in ("blind_acc/all", "habit/all", "excess/all", "table2/longest", "gate/n_rejected"):
        assert theirs.get(key) == ours.get(key), key
    assert (audit / "index.html").read_text(encoding="utf-8").count("audit-lexam_en_80-") >= 80
