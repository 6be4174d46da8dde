"""``blindmcq cache check [--repair] [FILE]``: check the response cache, and repair it.

Check: SQLite's own ``PRAGMA quick_check`` of the file, then every row against the one typed schema of a
stored response (``backends.base.response_from_dict``). Prints one line per bad row (its key and why)
and a summary line. Exit 0 when the file is sound, 1 when it has bad rows or damage (nothing changed),
2 when it cannot be read at all (one line naming the file).

``--repair``: bad rows are deleted (the next run asks those calls again); a damaged file is rebuilt from
every row that still reads, the damaged file kept beside it as ``FILE.damaged-<time>``. Exit 0 when
repaired. FILE defaults to ``probe.cache`` of ``params.yaml`` (``.cache/blindmcq/responses.sqlite``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from blindmcq.cli._fail import fail
from blindmcq.engine.cache import CacheDamaged, ResponseCache, integrity_problem, salvage
from blindmcq.errors import BlindMCQError, InputError


def _default_path() -> str:
    """``probe.cache`` of ``params.yaml``; without a readable one, the schema's default."""
    from blindmcq.config.schema import Probe

    try:
        from blindmcq.params import load_params

        return (load_params().probe or Probe()).cache
    except BlindMCQError:
        return Probe().cache


def check(path: Path, repair: bool) -> int:
    if not path.is_file():
        raise InputError("no such response cache", file=str(path))
    damage = integrity_problem(path)
    if damage is None:
        try:
            with ResponseCache(path) as cache:
                total, bad = cache.bad_rows()
                for key, reason in bad:
                    print(f"{path}: bad row {key}: {reason}")
                if bad and repair:
                    dropped = cache.drop([key for key, _ in bad])
                    print(f"{path}: {total} rows, {dropped} bad rows dropped (the next run asks them again)")
                    return 0
                print(
                    f"{path}: {total} rows, {len(bad)} bad"
                    + ("; run with --repair to drop them" if bad else "")
                )
                return 1 if bad else 0
        except CacheDamaged as exc:
            damage = str(exc)
    if not repair:
        print(f"{path}: damaged ({damage}); run: blindmcq cache check --repair {path}")
        return 1
    kept, rows, complete = salvage(path)
    tail = (
        ""
        if complete
        else " (the read stopped at a damaged page: later rows are lost and will be asked again)"
    )
    print(f"{path}: rebuilt with {rows} good rows; the damaged file is kept as {kept}{tail}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="blindmcq cache", description="Check or repair the response cache.")
    sub = parser.add_subparsers(dest="action", required=True)
    chk = sub.add_parser("check", help="check every row against the schema; --repair drops bad rows")
    chk.add_argument("file", nargs="?", help="the cache file (default: probe.cache of params.yaml)")
    chk.add_argument("--repair", action="store_true", help="drop bad rows; rebuild a damaged file")
    args = parser.parse_args(argv)
    path = Path(args.file or _default_path())
    try:
        return check(path, args.repair)
    except (BlindMCQError, OSError) as exc:  # one line, exit 2
        return fail("cache", exc, path)


if __name__ == "__main__":
    raise SystemExit(main())
