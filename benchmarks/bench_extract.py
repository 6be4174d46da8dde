"""Pages per second of each extraction path, and of the full parallel extraction.

Renders a Commission-layout bank of at least --pages pages from the real customs items (all 2,950,
renumbered, repeated when more pages are asked for), then times:
  pdfplumber's plain extract_tables() and extract_words() on every page (the yardsticks), path 1 alone
  (pdfplumber tables), path 2 alone (ruling lines + words), the line reading's words alone, each on one
  core, parse included;
  extract_items with both paths and the line reading over --workers processes (what the corpus stage runs).
Prints the figures and the projected time for the real bank's 1,672 pages (target: under 1 minute on 2
cores, both paths and the line reading included; the projection from CPU-seconds is the one that does
not depend on what else the machine runs). Both paths read the same parsed page (corpus.pages.LeanPage).

Usage: python benchmarks/bench_extract.py [--pages 300] [--workers 2] [--out DIR] [--pdf FILE] [--no-paths]
(--pdf: time a bank rendered before, kept with --out, instead of rendering one; --no-paths: only the
yardsticks and the full extraction, not each path alone)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import pdfplumber
from _report import result  # run as a script: benchmarks/ is on sys.path

from blindmcq.corpus.default_bank import spec
from blindmcq.corpus.extract import extract_items, read_rows
from blindmcq.corpus.render import render_pdf

SHARED = Path(os.environ.get("BLINDMCQ_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
QUESTIONS = SHARED / "ua-customs-exam/questions.json"
REAL_PAGES = 1672


def customs_records(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    records = [r for items in data["legislation"].values() for r in items]
    for competency in data["operational_competencies"].values():
        for items in competency["levels"].values():
            records += items
    return records


def render_bank(pages: int, out: Path, questions: Path) -> tuple[Path, int, int]:
    records = customs_records(questions)
    specs = []
    while True:
        specs += [dataclasses.replace(spec(r), number=len(specs) + i + 1) for i, r in enumerate(records)]
        rendered = render_pdf(specs, out, source="bench", bank="customs")
        if rendered.n_pages >= pages:
            break
    keep = [s for s, item in zip(specs, rendered.items, strict=True) if item.page <= pages]
    rendered = render_pdf(keep, out, source="bench", bank="customs")
    return out, rendered.n_pages, len(keep)


def timed(fn) -> tuple[float, float]:
    """Wall seconds and CPU seconds (this process and its finished worker processes)."""

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    start, start_cpu = time.perf_counter(), cpu()
    fn()
    return time.perf_counter() - start, cpu() - start_cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--out", type=Path, default=None, help="keep the rendered PDF here")
    parser.add_argument("--pdf", type=Path, default=None, help="a bank rendered before (--out), not rendered")
    parser.add_argument(
        "--paths", action=argparse.BooleanOptionalAction, default=True, help="time each path alone too"
    )
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="bench-extract-"))
    t = time.perf_counter()
    if args.pdf is not None:
        pdf = args.pdf
        with pdfplumber.open(pdf) as doc:
            n_pages = len(doc.pages)
        print(f"{pdf}: {n_pages} pages, {pdf.stat().st_size / 1e6:.1f} MB (rendered before)")
    else:
        pdf, n_pages, n_items = render_bank(args.pages, folder / "bench-customs.pdf", args.questions)
        size = pdf.stat().st_size / 1e6
        print(f"rendered {n_pages} pages, {n_items} items, {size:.1f} MB in {time.perf_counter() - t:.0f} s")
    print(f"cores: {len(os.sched_getaffinity(0))}; load average before: {os.getloadavg()[0]:.1f}")
    print("pages/s by wall clock (what a user waits) and per CPU-second (unaffected by other processes)")

    def plain() -> None:  # pdfplumber as a user would call it: every page's extract_tables()
        with pdfplumber.open(pdf) as doc:
            for page in doc.pages:
                page.extract_tables()
                page.close()

    def words() -> None:  # pdfplumber's plain extract_words() on every page: the text alone
        with pdfplumber.open(pdf) as doc:
            for page in doc.pages:
                page.extract_words()
                page.close()

    wall, plain_cpu = timed(plain)
    print(
        f"pdfplumber's plain extract_tables(), 1 process: {wall:.1f} s, {n_pages / wall:.2f} pages/s; "
        f"{n_pages / plain_cpu:.2f} pages/CPU-s"
    )
    wall, words_cpu = timed(words)
    print(
        f"pdfplumber's plain extract_words(), 1 process: {wall:.1f} s, {n_pages / wall:.2f} pages/s; "
        f"{n_pages / words_cpu:.2f} pages/CPU-s"
    )
    for methods, lines, label in (
        (
            (("tables",), False, "path 1 (pdfplumber tables)"),
            (("rules",), False, "path 2 (ruling lines + words)"),
            ((), True, "line reading's words (chars to words)"),
        )
        if args.paths
        else ()
    ):
        wall, cpu = timed(lambda m=methods, x=lines: read_rows([pdf], methods=m, workers=1, lines=x))
        print(
            f"{label}, 1 process: {wall:.1f} s, {n_pages / wall:.2f} pages/s; {n_pages / cpu:.2f} pages/CPU-s"
        )
    out: dict = {}
    wall, cpu = timed(
        lambda: out.update(report=extract_items([pdf], source="bench", workers=args.workers)[1])
    )
    report = out["report"]
    print(
        f"both paths + line reading + assembly + verification, {args.workers} workers: {wall:.1f} s, "
        f"{n_pages / wall:.2f} pages/s; {n_pages / cpu:.2f} pages/CPU-s; "
        f"{cpu / plain_cpu:.2f}x the CPU of the plain extract_tables(), {cpu / words_cpu:.2f}x that of the "
        "plain extract_words()"
    )
    print(f"  items {report['n_items']}, confirmed in all fields: {report['confirmed_rate']['all']:.4f}")
    now, alone = REAL_PAGES * wall / n_pages / 60, REAL_PAGES * cpu / n_pages / args.workers / 60
    print(
        f"projected for {REAL_PAGES} pages on {args.workers} cores: {now:.1f} min at this wall clock, "
        f"{alone:.1f} min with the cores to itself (target < 1 min)"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    result(
        "extraction",
        f"{n_pages / cpu:.2f} pages/CPU-s ({REAL_PAGES} pages: {alone:.1f} min on {args.workers} cores)",
        f"plain extract_tables() {n_pages / plain_cpu:.2f} pages/CPU-s; target {REAL_PAGES} pages < 1 min",
        1.0 / alone if alone else None,
        f"{cpu / plain_cpu:.2f}x the CPU of plain extract_tables()",
    )


if __name__ == "__main__":
    main()
