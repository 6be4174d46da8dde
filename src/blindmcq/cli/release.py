"""``blindmcq release``: push this commit's outputs to the DVC remote and tag it
(``reporting.release.release``)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from blindmcq.cli._fail import fail
from blindmcq.errors import BlindMCQError
from blindmcq.reporting.release import RELEASE_REMOTE, release


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq release",
        description="Push this commit's corpus, statute index, predictions and report to the DVC remote "
        "and tag the commit. Credentials come from the environment only.",
    )
    parser.add_argument("-C", "--project", default=".", help="project root (default: here)")
    parser.add_argument("--remote", help="DVC remote name (default: the project's default remote)")
    parser.add_argument(
        "--public-url",
        help="the read-only URL the pushed remote is served at (default: the S3 bucket's public HTTPS URL)",
    )
    parser.add_argument("--tag", help="tag name (default: release-<YYYYMMDD>-<shortsha>)")
    parser.add_argument("-j", "--jobs", type=int, help="parallel uploads (DVC's default when unset)")
    parser.add_argument("--git-push", metavar="GIT_REMOTE", help="also push the tag to this git remote")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[release] %(message)s")
    try:
        done = release(
            args.project,
            remote=args.remote,
            tag=args.tag,
            jobs=args.jobs,
            git_remote=args.git_push,
            pull_url=args.public_url,
        )
    except BlindMCQError as exc:
        return fail("release", exc)
    print(
        f"released {done.commit[:7]} as {done.tag} to remote {done.remote!r} "
        f"({len(done.outputs)} outputs, {done.pushed} files uploaded)"
    )
    if done.pull_url:
        print(f"pull it: dvc pull -r {RELEASE_REMOTE} && dvc repro  (or: blindmcq pull {done.pull_url})")
    else:
        print("no read-only URL known for this remote: give --public-url to write the 'release' remote")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
