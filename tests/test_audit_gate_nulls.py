"""``blindmcq audit`` with the default `longest` gate on a bank with no length leak: the gate is
deterministic, so its ~1/4 rejections are read against the consistent picker, not Binomial(8, 1/4)."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path

from blindmcq.cli.audit import main

WORDS = "river mountain valley plain coast delta plateau basin ridge lake forest steppe".split()


def no_length_leak_bank(path: Path, items: int, seed: int = 7) -> None:
    """Four options of distinct lengths a item, the key's rank by length uniform: longest is right on 1/4."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        for i in range(items):
            base = " ".join(rng.choice(WORDS) for _ in range(3))
            options = [f"{base} {'x' * extra}{i}" for extra in rng.sample(range(1, 9), 4)]
            out.writerow([f"Question {i}?", *options, "ABCD"[rng.randrange(4)]])


def test_audit_reads_a_consistent_gate_against_the_consistent_picker(tmp_path: Path) -> None:
    bank = tmp_path / "bank.csv"
    no_length_leak_bank(bank, 400)  # the 897-item ZNO case is tests/analysis/test_gate_nulls.py's
    out = tmp_path / "out"
    assert main([str(bank), "--no-header", "--out", str(out)]) == 0
    gate = json.loads((out / "gate.json").read_text(encoding="utf-8"))
    rejected = len(gate["rejected"])
    assert 70 <= rejected <= 130 and all(gate["counts"]["same_pick"])
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "by design" not in report
    want = "about 100 rejections expected from a consistent picker that reads nothing"
    assert want in report and f"{rejected} seen: no evidence of a leak" in report
    assert re.search(r"about 10\.9 from a picker that redraws in each order", report)
    table = (out / "tables" / "gate.md").read_text(encoding="utf-8")
    assert "Expected, consistent picker" in table and "Expected, redrawing picker: Binomial(8, 1/4)" in table
