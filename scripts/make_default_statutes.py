"""Write defaults/statutes/provisions-default.jsonl: the four acts the default (customs) bank tests.

Usage: python scripts/make_default_statutes.py [--source PATH] [--out PATH]
The provisions are copied unchanged, in corpus order, from the shipped corpus.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from blindmcq.atomic import atomic_path
from blindmcq.statutes.corpus import read_provisions

DEFAULT_ACTS = (
    "ua-law-254-96",  # Конституція України
    "ua-law-889-19",  # Закон «Про державну службу»
    "ua-law-4495-17",  # Митний кодекс України
    "ua-law-1700-18",  # Закон «Про запобігання корупції»
)
ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--source", type=Path, default=ROOT.parent / "shared/data/ua-legislation/provisions.jsonl.xz"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "defaults/statutes/provisions-default.jsonl")
    args = parser.parse_args()
    provisions = read_provisions(args.source, set(DEFAULT_ACTS))
    with atomic_path(args.out) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for p in provisions:
            fh.write(json.dumps(p.to_json(), ensure_ascii=False) + "\n")
    size = args.out.stat().st_size
    print(f"{args.out}: {len(provisions)} provisions of {len(DEFAULT_ACTS)} acts, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
