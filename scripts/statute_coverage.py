"""How far the bundled statutes cover a bank (``blindmcq.statutes.coverage``), against a random-word bank
of the same shape (every option replaced by as many random Ukrainian lemmas): the figures
docs/audit.md quotes.

    PYTHONPATH=src python scripts/statute_coverage.py results/corpus/items.jsonl
    PYTHONPATH=src python scripts/statute_coverage.py tests/fixtures/audit/geography_uk.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from blindmcq.datasets.generic import load_generic
from blindmcq.datasets.items import read_items
from blindmcq.statutes.corpus import read_provisions
from blindmcq.statutes.coverage import null_words, random_options, statute_coverage
from blindmcq.statutes.index import build_index
from blindmcq.statutes.text import Analyzer, TextConfig

STATUTES = Path(__file__).resolve().parents[1] / "defaults/statutes/provisions-default.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bank", type=Path, help="items.jsonl, or any bank the generic loader reads")
    parser.add_argument("--statutes", type=Path, default=STATUTES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    items = read_items(args.bank) if args.bank.suffix == ".jsonl" else load_generic(args.bank)
    text = TextConfig()
    analyzer = Analyzer(text)
    index = build_index(read_provisions(args.statutes), text, analyzer=analyzer)
    words = null_words("uk")
    assert words is not None
    for name, bank in (("bank", items), ("random words", random_options(items, words, seed=args.seed + 99))):
        print(f"{name}: {statute_coverage(bank, index, analyzer, words, seed=args.seed).sentence()}")


if __name__ == "__main__":
    main()
