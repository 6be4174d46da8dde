"""What the round-trip tests compare (imported predictions against blindmcq's own probe, and Table 4),
and ``require``: the harnesses are an optional extra, so a test that needs one skips without it, unless
``BLINDMCQ_REQUIRE_HARNESSES`` is set (CI, after installing ``.[harnesses]``), where a skip would hide a
gap and fails instead (as ``BLINDMCQ_REQUIRE_DATA`` does for the full inputs)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from blindmcq.analysis.frame import Baseline
from blindmcq.analysis.gate import gate
from blindmcq.analysis.metrics import analyze
from blindmcq.analysis.tables import build_tables
from blindmcq.auditing.surface import surface_strategies
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import model_config
from blindmcq.datasets.items import Item
from blindmcq.harnesses.documents import ProbeConfig
from blindmcq.tasks.probe import EngineSettings, run_probe

# what a call shows and what was picked: equal between a harness and blindmcq for the same picks
# (the request hash, backend, raw text, usage and time say how the call was made, not what it answered)
ANSWER_COLUMNS = [
    "item_id", "model", "condition", "phrasing", "labels", "protocol", "reasoning", "order", "order_id",
    "forced_slot", "key_slot", "n_options", "picked_slot", "picked_option", "correct", "parse_status",
    "setting",
]  # fmt: skip


def require(module: str) -> ModuleType:
    """``pytest.importorskip``, or a failure where CI installed the extra (``BLINDMCQ_REQUIRE_HARNESSES``)."""
    if os.environ.get("BLINDMCQ_REQUIRE_HARNESSES"):
        try:
            return __import__(module)
        except ImportError as exc:
            pytest.fail(f"{module} is not installed but BLINDMCQ_REQUIRE_HARNESSES is set ({exc})")
    return pytest.importorskip(module, reason=f"needs {module}: pip install -e '.[harnesses]'")


def own_probe(items: Sequence[Item], config: ProbeConfig, model: str, cache: Path) -> pd.DataFrame:
    """blindmcq's probe of ``items`` with the model config ``model`` (``conf/model``) under ``config``."""
    return run_probe(
        items, model_config(load_model_file(model)), config.setup, EngineSettings(cache, progress=False)
    )


def answers(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[ANSWER_COLUMNS].reset_index(drop=True).astype({"order": str})


def table4(predictions: pd.DataFrame, items: Sequence[Item], model: str) -> str:
    """Table 4 (habit and excess) as the analyze stage builds it: the model's gate over the 2N orders,
    the analysis on the published order, the table in Markdown."""
    base = Baseline(phrasing="original", labels="latin", protocol="sl", reasoning="direct")
    g = gate(predictions, gate_model=model, orders="all", base=base)
    analysis = analyze(predictions, gate=g, base=Baseline(**{**base.__dict__, "orders": ["rot0"]}))
    picks = surface_strategies(list(items), 0).picks
    return build_tables(analysis, baselines=picks, items=list(items))["table4"].markdown()


def small_export(tmp_path: Path, harness: str, n: int = 4) -> Path:
    """``blindmcq export HARNESS`` of a four-option CSV bank of ``n`` items (every one probed)."""
    from blindmcq.cli import export as export_cli

    bank = tmp_path / "bank.csv"
    rows = "".join(f"Q{i}?,opt a{i},opt b{i},opt c{i},opt d{i},{'ABCD'[i % 4]}\n" for i in range(n))
    bank.write_text("question,A,B,C,D,answer\n" + rows, encoding="utf-8")
    out = tmp_path / f"export-{harness}"
    assert export_cli.main([harness, str(bank), "--out", str(out), "--sample", "all"]) == 0
    return out
