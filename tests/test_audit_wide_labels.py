"""Wide banks and a bank's own labels in the audit: a 110-option bank audits with the probe and prints
no pandas PerformanceWarning (frames built whole, agreement from marginals past N=16); a Cyrillic-keyed
bank's report names slots by position and by its own labels, counts beside shares, while metrics.json
keeps the documented Latin names."""

from __future__ import annotations

import csv
import json
import random
import warnings
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from blindmcq import stats
from blindmcq.analysis.tables import slot_name
from blindmcq.auditing.audit import AUDIT_GROUPS, Mapping, run_audit
from blindmcq.cli.audit import main
from blindmcq.config.files import load_groups, load_model_file
from blindmcq.config.schema import model_config


def _wide_bank(path: Path, n: int, items: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    keys = []
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["question", *[f"o{i}" for i in range(n)], "answer"])
        for k in range(items):
            words = "ab cd ef gh".split()
            options = [f"w{i} " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
                       for i in range(n)]  # fmt: skip
            keys.append(rng.randrange(n))
            out.writerow([f"Q{k}?", *options, keys[-1]])
    return keys


@pytest.mark.slow
def test_a_wide_bank_audits_without_pandas_performance_warnings(tmp_path: Path) -> None:
    n = 110  # past 100 slots: the count pandas warns at for a frame built column by column
    bank = tmp_path / "wide.csv"
    keys = _wide_bank(bank, n, items=3)
    mapping = Mapping(options=[f"o{i}" for i in range(n)], key="answer", key_format="index")
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        longest, configs = model_config(load_model_file("longest")), load_groups(AUDIT_GROUPS)
        result = run_audit(bank, tmp_path / "out", mapping, model=longest, configs=configs)
    predictions = pd.read_parquet(tmp_path / "out" / "predictions.parquet")
    assert set(predictions["n_options"]) == {n} and predictions["item_id"].nunique() == 3
    assert result.metrics["agreement"] == 1.0  # the gate model is the probed model
    assert result.metrics[f"bank/key_share/{slot_name(n - 1)}"] == round(keys.count(n - 1) / 3, 3)


def test_agreement_past_the_dense_limit_equals_the_joint_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    for n in (4, 9):
        rows = 400
        items, key = rng.integers(0, 25, rows), rng.integers(0, n, rows)
        a = np.where(rng.random(rows) < 0.4, key, rng.integers(0, n, rows))
        b = np.where(rng.random(rows) < 0.5, a, rng.integers(0, n, rows))
        args = (items, np.full(rows, n), key, a, b)
        joint = stats.agreement_given_key(*args, n_boot=200, seed=0)
        with monkeypatch.context() as m:
            m.setattr(stats, "DENSE_AGREEMENT_N", 0)
            marginal = stats.agreement_given_key(*args, n_boot=200, seed=0)
        for got, want in zip(astuple(marginal), astuple(joint), strict=True):
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert joint.gap > 0.1  # b copies a half the time: far above the independent pickers' agreement


def test_a_cyrillic_keyed_bank_is_reported_with_its_own_labels_and_counts(tmp_path: Path) -> None:
    rng = random.Random(1)
    labels = "АБВГ"
    keyed = [labels[i % 4] for i in range(10)] + ["Б"] * 6  # Б is the most frequent key: 8 of 16
    bank = tmp_path / "zno.csv"
    with bank.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["question", "А", "Б", "В", "Г", "answer"])
        for i, key in enumerate(keyed):
            out.writerow([f"Питання {i}?", *[f"варіант {rng.random():.4f}" for _ in range(4)], key])
    out_dir = tmp_path / "out"
    argv = [str(bank), "--options", "А", "Б", "В", "Г", "--key", "answer", "--key-format", "label"]
    assert main([*argv, "--labels", "cyrillic", "--out", str(out_dir)]) == 0  # probed by longest
    report = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "| Pick 1 (А) | Pick 2 (Б) |" in report and "| Key 4 (Г) |" in report  # Table 4
    assert "Pick B" not in report and "Key B" not in report
    counts = {c: keyed.count(c) for c in labels}
    for s, label in enumerate(labels):
        share = counts[label] / len(keyed)
        assert f"slot {s + 1} ({label}) {counts[label]} ({share:.3f})" in report
        assert f"| key in slot {s + 1} ({label}) | {counts[label]} ({share:.3f}) |" in report
    metrics = json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["bank/key_share/B"] == round(counts["Б"] / len(keyed), 3)  # the documented Latin name
    assert not any("/Б" in key or "/А" in key for key in metrics)
    profile = pd.read_csv(out_dir / "tables" / "bank_profile.csv")
    assert profile["items"].dropna().astype(int).tolist() == [counts[c] for c in labels]


def test_index_keys_name_slots_by_position_only(tmp_path: Path) -> None:
    bank = tmp_path / "plain.csv"
    _wide_bank(bank, 4, items=12, seed=2)
    out_dir = tmp_path / "out"
    argv = [str(bank), "--options", "o0", "o1", "o2", "o3", "--key", "answer", "--key-format", "index"]
    assert main([*argv, "--model", "none", "--out", str(out_dir)]) == 0
    report = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "| key in slot 1 |" in report and "in brackets" not in report
