"""``blindmcq report --from DIR`` / ``--export DIR``: the report of a release folder, no model
(``reporting.bundle``)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from blindmcq.cli._fail import fail, warnings_as_lines
from blindmcq.errors import BlindMCQError
from blindmcq.reporting.bundle import MANIFEST, export_bundle, report_from_bundle


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq report",
        description="Build the report (every table, figure, report.md and the HTML explorer) from a release "
        "folder, without a model; or write the release folder of this run.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--from", dest="source", metavar="RELEASE_DIR", help="release folder to report on")
    what.add_argument("--export", metavar="RELEASE_DIR", help="write this run's release folder there")
    parser.add_argument(
        "--out", default="release-report", help="report folder for --from (default: %(default)s)"
    )
    parser.add_argument(
        "-C",
        "--project",
        default=".",
        help="project root for --export; for --from, the git clone holding the release's commit, which "
        "pins every file (default: here)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="[report] %(message)s")
    warnings_as_lines("report")
    try:
        if args.export:
            manifest = export_bundle(args.project, args.export)
            size = sum(f["bytes"] for f in manifest["files"].values())
            print(f"wrote {args.export}: {len(manifest['files'])} files, {size:,} bytes ({MANIFEST})")
            return 0
        done = report_from_bundle(args.source, args.out, args.project)
    except (BlindMCQError, OSError) as exc:
        return fail("report", exc)
    out = Path(args.out)
    print(f"report of {args.source} -> {out / 'report.md'}, {out / 'html' / 'index.html'} (no model called)")
    print(f"every file checked against what commit {done['commit'][:12]} pins")
    if done["same_as_release"] is True:
        print("metrics.json: byte-identical to the released run's reports/metrics.json")
    elif done["same_as_release"] is False:
        print(
            "metrics.json: differs from the released run's reports/metrics.json (another blindmcq version?)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
