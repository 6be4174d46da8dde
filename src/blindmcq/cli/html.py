"""``blindmcq html [--out DIR]``: the HTML report of the pipeline's outputs
(``reporting.html.report_from_results``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from blindmcq import paths
from blindmcq.cli._fail import fail
from blindmcq.errors import InputError
from blindmcq.reporting.html import report_from_results


def main(argv: Sequence[str] | None = None) -> int:
    """``blindmcq html [--out DIR]``: the HTML report of the pipeline outputs under ``results/``."""
    parser = argparse.ArgumentParser(
        prog="blindmcq html",
        description="Write the static HTML report of the pipeline's outputs under results/: the tables, "
        "the figures and the item explorer, one folder that opens from disk with no server.",
        epilog="Run it after 'dvc repro' (the report stage already does). Exit code 2 names the missing "
        "output of an earlier stage.",
    )
    parser.add_argument("--out", type=Path, default=paths.REPORT_DIR / "html")
    args = parser.parse_args(argv)
    try:
        index = report_from_results(args.out)
    except InputError as exc:
        return fail("html", exc)
    print(index)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
