"""``blindmcq data fill [--shared DIR]`` (what ``make data`` runs): fill data/, the full inputs, from the
first source that has them, every file sha256-checked against ``data-sources.yaml``
(``datasets.fetch.fill``).

Exit 0 when data/ is filled and intact; 1 when it could not be filled (no network, say: ``make
test-data`` stops there); 2 when a data/ differs from the manifest (yours to fix, so ``dvc add data``
never runs) or on bad input (one line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from blindmcq.cli._fail import fail
from blindmcq.datasets.fetch import DATA, DEFAULT_NOTE, fill
from blindmcq.errors import ConfigError, InputError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq data", description="Fill data/, the full inputs (recorded in data-sources.yaml)."
    )
    sub = parser.add_subparsers(dest="action", required=True)
    fill_p = sub.add_parser("fill", help="fill data/ from the sources in order (make data)")
    fill_p.add_argument("--shared", type=Path, default=None, help="a folder holding the full inputs")
    args = parser.parse_args(argv)
    root = Path.cwd()
    try:
        report = fill(root, shared=args.shared)
    except (InputError, ConfigError) as exc:
        return fail("data", exc)
    # a data/ that differs from the manifest is the user's to fix: fail, so `dvc add data` never runs
    if (root / DATA).is_dir() and not report.filled:
        return 2
    if not report.filled:  # `make data` did not do what it says: non-zero, so `make test-data` stops
        print(
            f"make data: data/ not filled (missing {len(report.missing)} files; {DEFAULT_NOTE})",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
