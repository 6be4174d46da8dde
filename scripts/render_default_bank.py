"""Render the default sample bank (340 real legislation items) as Commission-layout PDFs.

Usage: python scripts/render_default_bank.py [QUESTIONS_JSON] [OUT_DIR]
Defaults: ../shared/data/ua-customs-exam/questions.json -> defaults/bank/. Output is byte-stable.
"""

from __future__ import annotations

import sys
from pathlib import Path

from blindmcq.corpus.default_bank import render_default_bank

QUESTIONS = Path(__file__).resolve().parents[2] / "shared/data/ua-customs-exam/questions.json"
OUT = Path(__file__).resolve().parents[1] / "defaults/bank"


def main(argv: list[str]) -> int:
    questions = Path(argv[0]) if argv else QUESTIONS
    out = Path(argv[1]) if len(argv) > 1 else OUT
    for r in render_default_bank(questions, out):
        print(f"{r.path}: {len(r.items)} items, {r.n_pages} pages, {r.path.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
