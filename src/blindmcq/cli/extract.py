"""``blindmcq extract PDF... --out DIR [--bank NAME] [--source NAME] [--review DIR] [--corrections FILE]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from blindmcq.cli._fail import fail
from blindmcq.config.schema import PdfDataset, default
from blindmcq.corpus.extract import N_OPTIONS, PAGE_TIMEOUT_S, extract_pdfs
from blindmcq.errors import BlindMCQError, InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pdfs", nargs="+", metavar="PDF", help="the Commission's PDF files")
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="writes items.jsonl and verification.json"
    )
    parser.add_argument(
        "--source", default=default(PdfDataset, "source"),
        help="id prefix, {source}-{bank}-{number} (default %(default)s)",
    )  # fmt: skip
    parser.add_argument("--bank", default=None, help="bank name (default: the file name less '{source}-')")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument(
        "--n-options",
        type=int,
        default=N_OPTIONS,
        help=f"options each item should have (default {N_OPTIONS}); settles rows split by a page break",
    )
    parser.add_argument("--pilot-per-bank", type=int, default=20, help="pilot sample size per bank")
    parser.add_argument(
        "--seed", type=int, default=default(PdfDataset, "seed"), help="seed of the pilot sample (%(default)s)"
    )
    parser.add_argument("--review", default=None, metavar="DIR", help="write review.html of disputed items")
    parser.add_argument(
        "--corrections", default=None, metavar="FILE", help="reviewed corrections (YAML) to apply"
    )
    parser.add_argument(
        "--page-timeout", type=float, default=PAGE_TIMEOUT_S, help="seconds one page may take to read"
    )


def check_arguments(args: argparse.Namespace) -> None:
    """One-line errors for values argparse lets through."""
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    if args.n_options < 2:
        raise InputError(f"--n-options must be at least 2, got {args.n_options}")
    if args.pilot_per_bank < 0:
        raise InputError(f"--pilot-per-bank must be 0 or more, got {args.pilot_per_bank}")
    if args.page_timeout <= 0:
        raise InputError(f"--page-timeout must be positive, got {args.page_timeout}")
    for flag, value in (("--out", args.out), ("--review", args.review)):
        if value is not None and Path(value).exists() and not Path(value).is_dir():
            raise InputError(f"{flag} names an existing file, not a folder", file=value)


def run(args: argparse.Namespace) -> int:
    try:
        check_arguments(args)
        report = extract_pdfs(
            args.pdfs,
            args.out,
            source=args.source,
            bank=args.bank,
            workers=args.workers,
            n_options=args.n_options,
            pilot_per_bank=args.pilot_per_bank,
            seed=args.seed,
            corrections=args.corrections,
            review_dir=args.review,
            page_timeout=args.page_timeout,
        )
    except BlindMCQError as exc:
        return fail(None, exc)
    rates = ", ".join(f"{k} {v:.4f}" for k, v in report["confirmed_rate"].items() if v is not None)
    print(f"{report['n_items']} items from {len(report['files'])} file(s) -> {args.out}")
    print(f"confirmed by both paths: {rates}")
    print(f"settled: {report['settled']}; disputed ids: {[d['id'] for d in report['disputed']]}")
    print(f"counts: {report['counts']['status']}")
    gaps = [(f["file"], g) for f in report["files"] for g in f.get("gaps", [])]
    if gaps:
        runs = "; ".join(
            f"{name} {g['first']}" + (f"-{g['last']}" if g["count"] > 1 else "") for name, g in gaps
        )
        print(
            f"missing item numbers: {report['missing_numbers']} in {len(gaps)} gap(s) ({runs}); the items "
            "beside each are disputed, a stub for each is on the review page"
        )
    if args.review:
        print(f"review page: {Path(args.review) / 'review.html'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq extract",
        description="Extract the Commission's PDF question bank into items.jsonl. Each PDF is read by two "
        "independent paths (table cells and the text layer); an item counts as confirmed when both agree, "
        "and verification.json says how many did, with the ids that did not.",
        epilog="example:\n  blindmcq extract bank1.pdf bank2.pdf --out corpus/\n\n"
        "Exit code 2 with one line naming the input when a PDF cannot be read.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
