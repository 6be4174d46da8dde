"""Compare every Parquet frame of two results folders, apart from what varies per run.

    python scripts/compare_predictions.py REFERENCE_RESULTS CANDIDATE_RESULTS

Each ``*.parquet`` under the reference (predictions, gate, intervention frames) must exist under the
candidate with the same rows in the same order and the same values, after dropping the columns that
vary per run (``time``, ``latency_s``, ``cached``: a rerun from the cache differs there). Columns the
candidate adds are allowed only when named in ``--allow-new`` (default: ``schema_version``); a column
the reference has and the candidate lacks is a difference. Prints one line per file; exit 1 on any
difference, 2 when a folder is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

VARYING = ("time", "latency_s", "cached")


def compare_frames(
    ref: pd.DataFrame,
    new: pd.DataFrame,
    *,
    ignore: tuple[str, ...] = VARYING,
    allow_new: tuple[str, ...] = (),
) -> str | None:
    """None when equal apart from ``ignore``d columns and ``allow_new`` additions; else what differs."""
    missing = [c for c in ref.columns if c not in new.columns and c not in ignore]
    added = [c for c in new.columns if c not in ref.columns and c not in ignore and c not in allow_new]
    if missing or added:
        return f"columns differ: missing {missing}, added {added}"
    if len(ref) != len(new):
        return f"{len(ref)} rows in the reference, {len(new)} in the candidate"
    cols = [c for c in ref.columns if c not in ignore]
    left = ref[cols].reset_index(drop=True)
    right = new[cols].reset_index(drop=True)
    try:
        pd.testing.assert_frame_equal(left, right, check_dtype=True, check_exact=True)
    except AssertionError as exc:
        first = str(exc).strip().splitlines()
        return " ".join(first[:4])
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--ignore", nargs="*", default=list(VARYING), help="columns that may differ")
    parser.add_argument(
        "--allow-new", nargs="*", default=["schema_version"], help="columns the candidate may add"
    )
    args = parser.parse_args(argv)
    for folder in (args.reference, args.candidate):
        if not folder.is_dir():
            print(f"{folder}: not a folder", file=sys.stderr)
            return 2
    files = sorted(p.relative_to(args.reference) for p in args.reference.rglob("*.parquet"))
    if not files:
        print(f"{args.reference}: no parquet files", file=sys.stderr)
        return 2
    failures = 0
    for rel in files:
        other = args.candidate / rel
        if not other.is_file():
            print(f"DIFF  {rel}: absent from {args.candidate}")
            failures += 1
            continue
        ref, new = pd.read_parquet(args.reference / rel), pd.read_parquet(other)
        problem = compare_frames(ref, new, ignore=tuple(args.ignore), allow_new=tuple(args.allow_new))
        if problem:
            failures += 1
        print(f"{'DIFF' if problem else 'SAME'}  {rel} ({len(ref)} rows){': ' + problem if problem else ''}")
    print(f"{len(files) - failures}/{len(files)} frames equal (ignoring {', '.join(args.ignore)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
