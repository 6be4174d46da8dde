"""``blindmcq pull [URL]``: a release's outputs over HTTPS, each object checked (``reporting.pull``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from blindmcq.cli._fail import fail
from blindmcq.errors import BlindMCQError
from blindmcq.reporting.pull import RELEASE_REMOTE, pull


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq pull",
        description="Pull a release's outputs from its read-only URL through DVC (remote 'release'), each "
        "object checked against its md5; then `dvc repro` has nothing to run and calls no model.",
    )
    parser.add_argument("url", nargs="?", help="the release's URL (default: remote 'release' of .dvc/config)")
    parser.add_argument("--remote", default=RELEASE_REMOTE, help="DVC remote name (default: %(default)s)")
    parser.add_argument("-C", "--project", default=".", help="project root (default: here)")
    parser.add_argument("-j", "--jobs", type=int, help="parallel downloads (DVC's default when unset)")
    args = parser.parse_args(argv)
    try:
        summary = pull(args.project, args.url, remote=args.remote, jobs=args.jobs)
    except (BlindMCQError, OSError) as exc:
        return fail("pull", exc)
    print(f"{summary}\nnext: `dvc repro` (nothing to run: every stage is up to date, no model is called)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
