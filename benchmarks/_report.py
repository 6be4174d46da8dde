"""What the benchmarks share: one summary line each, which ``benchmarks/run_all.py`` (``make bench``)
collects, and where the full inputs are.

A benchmark prints its details as it likes, then calls :func:`result` once with its headline figure and
the limit or peer it is measured against, in the same run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PREFIX = "BENCH "


def full_input(rel: str) -> Path | None:
    """The full input ``rel`` (e.g. ``ua-customs-exam/questions.json``) from data/ (``make data``) or
    ``$BLINDMCQ_SHARED_DATA`` (default ``../shared/data``), if either has it."""
    roots = [ROOT / "data", Path(os.environ.get("BLINDMCQ_SHARED_DATA", ROOT.parent / "shared" / "data"))]
    return next((r / rel for r in roots if (r / rel).is_file()), None)


def result(name: str, figure: str, against: str, ratio: float | None, note: str = "") -> None:
    """Print the machine-readable summary line: ``ratio`` is figure over limit/peer (>1: better)."""
    row = {"name": name, "figure": figure, "against": against, "ratio": ratio, "note": note}
    print(PREFIX + json.dumps(row, ensure_ascii=False), flush=True)
