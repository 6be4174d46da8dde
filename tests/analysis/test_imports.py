"""Importing the statistics must stay light: no plotting backend."""

from __future__ import annotations

import subprocess
import sys


def test_importing_stats_does_not_import_matplotlib() -> None:
    code = (
        "import sys, blindmcq.stats, blindmcq.analysis.gate, blindmcq.analysis.tables\n"
        "print('matplotlib' in sys.modules)\n"
        "from blindmcq.analysis import write_figures\n"
        "print('matplotlib' in sys.modules, callable(write_figures))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]
