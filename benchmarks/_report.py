"""One summary line per benchmark, which ``benchmarks/run_all.py`` (``make bench``) collects.

A benchmark prints its details as it likes, then calls :func:`result` once with its headline figure and
the limit or peer it is measured against, in the same run.
"""

from __future__ import annotations

import json

PREFIX = "BENCH "


def result(name: str, figure: str, against: str, ratio: float | None, note: str = "") -> None:
    """Print the machine-readable summary line: ``ratio`` is figure over limit/peer (>1: better)."""
    row = {"name": name, "figure": figure, "against": against, "ratio": ratio, "note": note}
    print(PREFIX + json.dumps(row, ensure_ascii=False), flush=True)
