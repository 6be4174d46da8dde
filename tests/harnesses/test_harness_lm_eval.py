"""Round trip through lm-evaluation-harness, offline: export the default sample, run lm-eval's own command
line on it (its ``dummy`` model, and a fixed-slot model registered here), import ``--log_samples``, and
compare with blindmcq's own probe of the same items by the ``constant-*`` picker: the same rows and the
same Table 4 (habit and excess)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from harness_support import answers, own_probe, require, table4

from blindmcq.answers.predictions import read_predictions
from blindmcq.cli import export as export_cli
from blindmcq.cli import importing

# the full suite: each test runs lm-eval's command line end to end (tens of seconds); the fast suite keeps the
# documents' checks (test_harness_documents.py)
pytestmark = pytest.mark.full

SLOT_MODEL = "blindmcq-test-slot"


@pytest.fixture(scope="module")
def lm_eval(tmp_path_factory: pytest.TempPathFactory):
    require("lm_eval")
    import lm_eval.models  # noqa: F401  (lm-eval fills its registry lazily, only while it is empty)
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    class SlotLM(LM):
        """Always prefers the label of one slot: log-likelihood 0 for it, -1 for every other label."""

        def __init__(self, slot: int = 0, **_: object) -> None:
            super().__init__()
            self.slot = int(slot)

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            return [(0.0 if r.arguments[1].strip() == "ABCD"[self.slot] else -1.0, False) for r in requests]

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

        def generate_until(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

    try:
        register_model(SLOT_MODEL)(SlotLM)
    except ValueError:  # registered by an earlier import of this module in the same process
        pass
    return tmp_path_factory.mktemp("lm_eval")


def run_lm_eval(task_dir: Path, out: Path, model: str, model_args: str, monkeypatch) -> Path:
    """lm-eval's own command line, in this process (so a model registered here is found); the samples."""
    from lm_eval.__main__ import cli_evaluate

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["lm_eval", "--model", model, "--tasks", "blindmcq_probe", "--include_path", str(task_dir),
            "--log_samples", "--output_path", str(out)]  # fmt: skip
    if model_args:
        argv += ["--model_args", model_args]
    monkeypatch.setattr(sys, "argv", argv)
    cli_evaluate()
    (samples,) = out.rglob("samples_blindmcq_probe_*.jsonl")
    return samples


@pytest.fixture(scope="module")
def exported(lm_eval: Path, bank_items: Path) -> Path:
    task_dir = lm_eval / "task"
    assert export_cli.main(["lm-eval", str(bank_items), "--out", str(task_dir)]) == 0  # the default sample
    return task_dir


@pytest.mark.parametrize(("slot", "picker"), [(0, "constant-a"), (2, "constant-c")])
def test_a_fixed_slot_model_in_lm_eval_equals_blindmcqs_own_probe(
    slot, picker, exported, default_sample, probe_config, tmp_path, monkeypatch
):
    samples = run_lm_eval(exported, tmp_path / "out", SLOT_MODEL, f"slot={slot}", monkeypatch)
    out = tmp_path / "imported.parquet"
    assert importing.main(["lm-eval", str(samples), "--out", str(out), "--model", picker]) == 0
    imported = read_predictions(out)  # through the one predictions reader: schema version 1
    own = own_probe(default_sample, probe_config, picker, tmp_path / "cache.sqlite")
    assert len(imported) == len(own) == 780
    assert answers(imported).equals(answers(own))
    assert (imported["picked_slot"] == slot).all() and set(imported["backend"]) == {"lm-eval"}
    theirs, ours = table4(imported, default_sample, picker), table4(own, default_sample, picker)
    assert theirs == ours
    assert picker in theirs and "habit" in theirs.lower()


def test_lm_evals_dummy_model_round_trips(exported, default_sample, tmp_path, monkeypatch):
    """The dummy model answers at random: every imported pick is the argmax of what lm-eval logged, and
    lm-eval's own accuracy is the imported share correct."""
    samples = run_lm_eval(exported, tmp_path / "out", "dummy", "", monkeypatch)
    out = tmp_path / "dummy.jsonl"
    audit = tmp_path / "audit"
    assert importing.main(["lm-eval", str(samples), "--out", str(out), "--model", "dummy",
                           "--audit", str(audit)]) == 0  # fmt: skip
    imported = read_predictions(out)
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(imported) == 780
    for row, (_, pred) in zip(rows, imported.iterrows(), strict=True):
        scores = [float(r[0]) for r in row["filtered_resps"]]
        assert pred["item_id"] == row["doc"]["item_id"] and pred["order_id"] == row["doc"]["order_id"]
        assert pred["picked_slot"] == scores.index(max(scores))
        assert pred["correct"] == (pred["picked_slot"] == row["doc"]["key_slot"]) == bool(row["acc"])
    # the audit report from the imported answers: the exported bank, the dummy's gate and Table 4
    report = (audit / "report.md").read_text(encoding="utf-8")
    assert "`dummy` answers blind" in report and "Habit" in report
    metrics = json.loads((audit / "metrics.json").read_text(encoding="utf-8"))
    blind = imported[(imported["condition"] == "blind") & (imported["order_id"] == "rot0")]
    assert metrics["blind_acc/all"] == round(float(blind["correct"].mean()), 3)


def test_gate_analyze_and_report_stages_run_on_imported_predictions(
    exported, repo_root, tmp_path, monkeypatch
):
    """The pipeline on the default bank with ``constant-a`` (panel none): its report's tables, then the
    same gate, analyze and report stages with lm-eval's answers of a slot-0 model imported in place of
    the probe's predictions: Table 4 (and Tables 3 and 5, and the headline metrics) come out the same."""
    import importlib
    import shutil

    import yaml
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    work = tmp_path / "project"
    for sub in ("conf", "defaults"):
        shutil.copytree(repo_root / sub, work / sub)
    overrides = ["model=constant-a", "model@gate_model=constant-a", "panel=none",
                 f"probe.cache={work}/cache.sqlite", "tracking.enabled=false"]  # fmt: skip
    with initialize_config_dir(config_dir=str(work / "conf"), version_base=None):
        params = OmegaConf.to_container(compose(config_name="config", overrides=overrides), resolve=True)
    (work / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    monkeypatch.chdir(work)

    def stages(*names: str) -> dict[str, str]:
        for name in names:
            importlib.import_module(f"blindmcq.stages.{name}").main()
        tables = {t: (work / f"reports/tables/{t}.md").read_text(encoding="utf-8") for t in
                  ("table3", "table4", "table5", "gate")}  # fmt: skip
        metrics = json.loads((work / "reports/metrics.json").read_text(encoding="utf-8"))
        return tables | {
            "metrics": json.dumps({k: v for k, v in metrics.items() if "/" in k}, sort_keys=True)
        }

    own = stages("corpus", "statutes", "baselines", "probe", "gate", "analyze", "report")
    # export this project's corpus under its composed config, answer in lm-eval, import over the probe's
    task_dir = work / "lm-task"
    assert export_cli.main(["lm-eval", "results/corpus/items.jsonl", "--params", "params.yaml",
                            "--out", str(task_dir)]) == 0  # fmt: skip
    samples = run_lm_eval(task_dir, work / "lm-out", SLOT_MODEL, "slot=0", monkeypatch)
    predictions = work / "results/predictions/predictions.parquet"
    assert importing.main(["lm-eval", str(samples), "--out", str(predictions), "--model", "constant-a"]) == 0
    assert set(read_predictions(predictions)["backend"]) == {"lm-eval"}
    imported = stages("gate", "analyze", "report")
    assert imported == own
    assert "constant-a" in imported["table4"]
