"""Where each pipeline step writes; each step reads only what the one before wrote."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path("results")
INPUTS = RESULTS / "inputs.json"  # the inputs stage: which inputs the run used
CORPUS_DIR = RESULTS / "corpus"
ITEMS = CORPUS_DIR / "items.jsonl"
VERIFICATION = CORPUS_DIR / "verification.json"
STATUTE_INDEX = RESULTS / "statutes" / "index"
BASELINES_DIR = RESULTS / "baselines"
PREDICTIONS_DIR = RESULTS / "predictions"
PREDICTIONS = PREDICTIONS_DIR / "predictions.parquet"
GATE_DIR = RESULTS / "gate"
ANALYSIS_DIR = RESULTS / "analysis"
REPORT_DIR = Path("reports")
