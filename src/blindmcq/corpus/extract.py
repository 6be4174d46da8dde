"""Extract the Commission's PDFs by both paths, pages in parallel; write items and verification.

Outputs in ``out_dir`` (written only when every file succeeded, each atomically):
- ``items.jsonl``: the items settled per :mod:`blindmcq.corpus.settle` (``meta.settled``: which path won
  and why; ``meta.confirmed``: per-field agreement of the paths), corrections applied; unsettled items
  have status ``disputed``.
- ``verification.json``: the report of :func:`blindmcq.corpus.verify.compare`, the layout recognised per
  file, how items were settled, the disputed items, and the corrections applied.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import itertools
import json
import logging
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
from pdfplumber.page import Page

from blindmcq.atomic import write_text
from blindmcq.config.schema import PdfDataset, default
from blindmcq.corpus import path_rules, path_tables
from blindmcq.corpus.assemble import (
    N_OPTIONS,
    Layout,
    assemble,
    detect_layout,
    mark_values,
    split_header_rows,
)
from blindmcq.corpus.corrections import apply_corrections, load_corrections
from blindmcq.corpus.lines import LinesError, PageText, file_rows, horizontal_only, page_text
from blindmcq.corpus.outside import dispute_strays
from blindmcq.corpus.outside import report as outside_report
from blindmcq.corpus.pages import PageFrameError, lean, upright
from blindmcq.corpus.path_tables import Outside
from blindmcq.corpus.plausible import check_file
from blindmcq.corpus.reading3 import compare as third_reading
from blindmcq.corpus.reading3 import dispute as third_dispute
from blindmcq.corpus.rows import Row
from blindmcq.corpus.settle import (
    dispute,
    dispute_gaps,
    dispute_text,
    gap_text,
    leading_gaps,
    settle,
    with_boxes,
)
from blindmcq.corpus.strikes import Run, exclude_struck, take_strikes
from blindmcq.corpus.verify import compare
from blindmcq.datasets.items import Item, write_items
from blindmcq.errors import InputError
from blindmcq.vocabulary import ITEM_STATUSES

PathFn = Callable[[Page, int], list[Row]]
METHODS: dict[str, PathFn] = {"tables": path_tables.page_rows, "rules": path_rules.page_rows}
ITEMS_FILE, VERIFICATION_FILE = "items.jsonl", "verification.json"


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def page_count(path: Path) -> int:
    """Open ``path`` once to check it is a readable, unencrypted PDF with pages."""
    if not path.is_file():
        raise InputError("PDF not found", file=str(path))
    if path.stat().st_size == 0:
        raise InputError("empty file, not a PDF", file=str(path))
    try:
        with pdfplumber.open(path) as pdf:
            n = len(pdf.pages)
    except Exception as exc:  # pdfminer wraps every parse failure; report the cause
        cause = exc.args[0] if exc.args else exc
        if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
            raise InputError("encrypted PDF; give a decrypted copy", file=str(path)) from exc
        raise InputError(f"not a readable PDF ({cause!r})", file=str(path)) from exc
    if n == 0:
        raise InputError("PDF has no pages", file=str(path))
    return n


PAGE_TIMEOUT_S = 120.0  # one page taking longer than this is a broken page, named in the error


class PageTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise PageTimeout


# pdfminer calls ``log.debug`` for every token and glyph it reads, some 16,000 times a page; with debug
# logging off each call still costs two Python calls (``Logger.debug``, ``isEnabledFor``): 3% of the reading
# time, measured. Those loggers' ``debug`` becomes a single no-op call (a third of that cost left) while
# their debug output is off.
_CHATTY_LOGGERS = ("pdfminer.psparser", "pdfminer.pdfinterp", "pdfminer.cmapdb")


def _no_debug(*args: object, **kwargs: object) -> None:
    return None


def quiet_pdfminer() -> None:
    """Silence pdfminer's per-token debug calls, unless someone turned its debug logging on."""
    for name in _CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        if not logger.isEnabledFor(logging.DEBUG):
            setattr(logger, "debug", _no_debug)  # noqa: B010 (an instance attribute over the method)


# A page allocates some 200,000 short-lived objects (pdfminer's glyphs, pdfplumber's dicts) and nearly no
# reference cycles; at Python's default thresholds the cyclic collector runs a thousand times per 40 pages
# and rescans every live object several times, 4% of the reading time. Rarer collections while reading
# pages; memory is still freed by reference counting as each page is closed.
READ_GC_THRESHOLD = (50_000, 20, 10)


@dataclasses.dataclass
class ChunkResult:
    rows: dict[str, list[Row]]
    sizes: dict[int, tuple[float, float]] = dataclasses.field(default_factory=dict)  # page -> (w, h)
    outside: dict[int, list[Outside]] = dataclasses.field(default_factory=dict)  # page -> lines, path 1
    text: dict[int, PageText] = dataclasses.field(default_factory=dict)  # page -> words, the line reading
    error: tuple[int, str] | None = None  # (page, message)
    turns: dict[int, tuple[int, int]] = dataclasses.field(default_factory=dict)  # page -> (/Rotate, read at)
    struck: dict[int, list[Run]] = dataclasses.field(default_factory=dict)  # page -> text runs, if struck


def read_block(
    path: str,
    pages: Sequence[int],
    methods: tuple[str, ...],
    page_timeout: float | None = PAGE_TIMEOUT_S,
    lines: bool = True,
) -> ChunkResult:
    """Rows of the 1-based ``pages`` by each named method (and, with ``lines``, each page's words for the
    line reading); the file opened once; a page error is returned."""
    result = ChunkResult({m: [] for m in methods})
    page_no = pages[0] if pages else 0
    timed = bool(page_timeout) and threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGALRM, _alarm) if timed else None
    quiet_pdfminer()
    thresholds = gc.get_threshold()
    gc.set_threshold(*READ_GC_THRESHOLD)
    try:
        with pdfplumber.open(path) as pdf:
            for page_no in pages:
                page = lean(pdf.pages[page_no - 1])  # one parse, shared by both paths
                page = upright(page)  # a page turned by /Rotate (or as a whole) read where its text is
                if page.rotation or page.page_obj.rotate:
                    result.turns[page_no] = (int(page.page_obj.rotate) % 360, page.rotation)
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, page_timeout)
                result.sizes[page_no] = (float(page.width), float(page.height))
                struck = take_strikes(page)  # strike lines out of the edges before any reading sees them
                if struck:
                    result.struck[page_no] = struck
                for m in methods:
                    if m == "tables":
                        rows, result.outside[page_no] = path_tables.page_reading(page, page_no)
                    else:
                        rows = METHODS[m](page, page_no)
                    result.rows[m].extend(rows)
                if lines:
                    result.text[page_no] = page_text(page, page_no)
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                page.close()
    except PageTimeout:
        result.error = (page_no, f"page could not be read: page took longer than {page_timeout:g} s to read")
    except PageFrameError as exc:
        result.error = (page_no, str(exc))
    except Exception as exc:  # a bad page stops the file; the caller names file and page
        result.error = (page_no, f"page could not be read: {type(exc).__name__}: {exc}")
    finally:
        gc.set_threshold(*thresholds)
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return result


@dataclasses.dataclass
class FileRows:
    path: Path
    n_pages: int
    rows: dict[str, list[Row]]  # by method, in page order
    sizes: dict[int, tuple[float, float]] = dataclasses.field(default_factory=dict)
    outside: dict[int, list[Outside]] = dataclasses.field(default_factory=dict)
    text: dict[int, PageText] = dataclasses.field(default_factory=dict)
    turns: dict[int, tuple[int, int]] = dataclasses.field(default_factory=dict)
    struck: dict[int, list[Run]] = dataclasses.field(default_factory=dict)


def check_distinct(paths: Sequence[Path]) -> None:
    """The same file (same path, or same bytes under another name) given twice is an error."""
    seen: dict[str, Path] = {}
    for p in paths:
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest in seen:
            raise InputError(f"the same PDF is given twice (also {seen[digest]})", file=str(p))
        seen[digest] = p


def read_rows(
    paths: Sequence[Path],
    *,
    methods: tuple[str, ...] = ("tables", "rules"),
    workers: int | None = None,
    page_timeout: float | None = PAGE_TIMEOUT_S,
    lines: bool = True,
) -> list[FileRows]:
    """Each file's rows by each method; each worker opens a file once for one contiguous block of pages."""
    counts = [page_count(p) for p in paths]
    check_distinct(paths)
    workers = workers or default_workers()
    tasks: list[tuple[int, list[int]]] = []
    for f, n in enumerate(counts):
        blocks = min(workers, n)
        bounds = [round(k * n / blocks) for k in range(blocks + 1)]
        tasks += [(f, list(range(a + 1, b + 1))) for a, b in itertools.pairwise(bounds) if b > a]
    args = [(str(paths[f]), pages, methods, page_timeout, lines) for f, pages in tasks]
    if workers == 1 or len(tasks) == 1:
        results = [read_block(*a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(read_block, *zip(*args, strict=True)))
    out = [FileRows(p, n, {m: [] for m in methods}) for p, n in zip(paths, counts, strict=True)]
    for (f, _), res in zip(tasks, results, strict=True):
        if res.error:
            raise InputError(res.error[1], file=str(paths[f]), page=res.error[0])
        for m in methods:
            out[f].rows[m].extend(res.rows[m])
        out[f].sizes.update(res.sizes)
        out[f].outside.update(res.outside)
        out[f].text.update(res.text)
        out[f].turns.update(res.turns)
        out[f].struck.update(res.struck)
    return out


def bank_name(path: Path, source: str) -> str:
    """Bank from the file name: the stem, less a leading ``{source}-``."""
    stem = path.stem
    bank = stem[len(source) + 1 :] if stem.startswith(f"{source}-") else stem
    if not bank:
        raise InputError("cannot derive a bank name from the file name; pass one", file=str(path))
    return bank


def _orientation(sizes: dict[int, tuple[float, float]]) -> str:
    kinds = {"landscape" if w > h else "portrait" for w, h in sizes.values()}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _layout_of(rows: list[Row], path: Path) -> Layout | None:
    return detect_layout(rows, path.name) if rows else None


def extract_items(
    paths: Sequence[str | Path],
    *,
    source: str,
    bank: str | None = None,
    workers: int | None = None,
    n_options: int | None = N_OPTIONS,
    pilot_per_bank: int = 20,
    seed: int = default(PdfDataset, "seed"),
    corrections: str | Path | None = None,
    page_timeout: float | None = PAGE_TIMEOUT_S,
) -> tuple[list[Item], dict[str, Any]]:
    """Items (the paths' disagreements settled, corrections applied) and the verification report."""
    files = [Path(p) for p in paths]
    if not files:
        raise InputError("no PDF given")
    fixes = load_corrections(corrections) if corrections else {}
    report_files: list[dict[str, Any]] = []
    owner: dict[str, str] = {}
    by_path: dict[str, list[Item]] = {"tables": [], "rules": []}
    settled: list[Item] = []
    all_gaps: list[dict[str, Any]] = []
    for fr in read_rows(files, workers=workers, page_timeout=page_timeout):
        path, rows = fr.path, fr.rows
        if not rows["tables"] and not rows["rules"]:
            ruled = next((p for p, t in sorted(fr.text.items()) if horizontal_only(t)), None)
            if ruled is not None:  # text between horizontal rules, and no vertical rule anywhere
                raise InputError(
                    "the table is ruled only horizontally (no vertical rules between its columns); the two "
                    "paths read a table whose columns are ruled",
                    file=str(path),
                    page=ruled,
                )
            raise InputError("no ruled question table found on any page", file=str(path))
        name = bank or bank_name(path, source)
        headings = {}
        for m in list(rows):
            rows[m], headings[m] = split_header_rows(rows[m])
        layouts = {m: _layout_of(rows[m], path) for m in rows}
        found = {
            m: assemble(
                rows[m],
                source=source,
                bank=name,
                file=path.name,
                n_options=n_options,
                layout=layouts[m],
                sizes=fr.sizes,
            )
            if layouts[m]
            else []
            for m in rows
        }
        found = {m: dispute_strays(found[m], fr.outside) for m in found}
        for item in found["tables"] + found["rules"]:
            if owner.setdefault(item.id, str(path)) != str(path):
                raise InputError(f"item id {item.id} also comes from {owner[item.id]}", file=str(path))
        with_table = {r.page for m in rows for r in rows[m]}
        main = layouts["tables"] or layouts["rules"]
        assert main is not None
        values = mark_values(rows["tables"] if layouts["tables"] else rows["rules"], main)
        keys = {m: check_file(found[m], file=str(path), values=values) for m in found if found[m]}
        layout = {"orientation": _orientation(fr.sizes), **main.to_json()}
        if fr.turns:  # pages with /Rotate, or read turned: {page: {"rotate": declared, "read_at": turn}}
            layout["turned_pages"] = {
                str(k): {"rotate": r, "read_at": t} for k, (r, t) in sorted(fr.turns.items())
            }
        if layouts["tables"] and layouts["rules"] and layouts["tables"] != layouts["rules"]:
            layout["path2"] = layouts["rules"].to_json()
        items = settle(found["tables"], found["rules"], n_options=n_options)
        # The reading that shares no layout logic with the paths: rows from the text lines, items by
        # reading3's own rules; an item it reads otherwise is disputed.
        try:
            line_rows, line_info = file_rows(list(fr.text.values()), path.name)
        except LinesError as exc:
            raise InputError(
                f"the line reading cannot read the file: {exc}", file=str(path), page=exc.page
            ) from exc
        reading3 = {**third_reading(items, line_rows), "lines": line_info}
        items = third_dispute(items, reading3)
        # Numbers missing between printed ones: the items beside each gap disputed, the gap reported
        by_id = {m: {i.id: i for i in found[m]} for m in found}
        items, gaps = dispute_gaps(items, by_id)
        # Checks on the text itself, whatever the readings agree on: no character that is no printed text,
        # no glyph printed over another or run through by a rule on the item's rows
        faults = {p: t.faults for p, t in fr.text.items() if t.faults}
        items = dispute_text(items, faults, by_id)
        # Rows struck through (an exclusion convention): excluded when wholly struck, else disputed
        items = exclude_struck(items, fr.struck, by_id)
        items = with_boxes(items, by_id)  # every disputed item's rows, for its crops on the review page
        for d in reading3["differ"]:  # the reading's texts go to the item (review page), not the report
            d.pop("reading", None)
        report_files.append(
            {
                "file": path.name,
                "bank": name,
                "pages": fr.n_pages,
                "layout": layout,
                "items_path1": len(found["tables"]),
                "items_path2": len(found["rules"]),
                "pages_without_table": sorted(set(range(1, fr.n_pages + 1)) - with_table),
                "mark_column": {"fourth_column": main.fourth, "values": values},
                "keys": keys.get("tables") or keys.get("rules"),
                "outside_cells": outside_report(fr.outside),
                "heading_rows": headings.get("tables", headings.get("rules", 0)),
                "reading3": reading3,
                "items_with_option_labels": sum(
                    "option_labels" in i.meta for i in found["tables"] or found["rules"]
                ),
                **({"gaps": gaps} if gaps else {}),  # absent where the numbers run without a gap
                # absent where no strike line runs through text: per page, the printed lines struck
                **(
                    {
                        "struck_through": {
                            str(p): sum(r.struck for r in rs) for p, rs in sorted(fr.struck.items())
                        }
                    }
                    if fr.struck
                    else {}
                ),
                # absent where no glyph overlaps another and no rule runs through text
                **(
                    {
                        "print_faults": {
                            str(p): [[w, round(t, 1), round(b, 1)] for w, t, b in fs]
                            for p, fs in sorted(faults.items())
                        }
                    }
                    if faults
                    else {}
                ),
            }
        )
        all_gaps += [{"file": path.name, **g} for g in gaps]
        for m in by_path:
            by_path[m] += found[m]
        settled += items
    # A bank whose lowest printed number is not 1: the numbers before it reported as a gap, that item
    # disputed (over all files, so a bank printed in several files is judged as a whole)
    paths_by_id = {m: {i.id: i for i in by_path[m]} for m in by_path}
    for gap in leading_gaps(settled):
        k = next(k for k, i in enumerate(settled) if i.id == gap["before"])
        settled[k] = with_boxes([dispute(settled[k], gap_text(gap), paths_by_id)], paths_by_id)[0]
        entry = next(f for f in report_files if f["file"] == settled[k].file)
        entry["gaps"] = [gap, *entry.get("gaps", [])]
        all_gaps.append({"file": entry["file"], **gap})
    report, _ = compare(by_path["tables"], by_path["rules"], per_bank=pilot_per_bank, seed=seed)
    if corrections:
        settled, applied = apply_corrections(
            settled, fixes, file=str(corrections), n_options=n_options, gaps=all_gaps
        )
    else:
        applied = {"file": None, "applied": [], "other_banks": 0}
    winners = Counter(str(i.meta["settled"]["path"]) for i in settled)
    report["counts"]["status"] = {s: sum(i.status == s for i in settled) for s in ITEM_STATUSES}
    report = {
        "source": source,
        "files": report_files,
        **report,
        "n_disputed": winners.get("None", 0),
        "settled": {p: winners.get(p, 0) for p in ("both", "tables", "rules", "correction", "None")},
        "disputed": [
            {"id": i.id, "file": i.file, "page": i.page, "why": i.meta["settled"]["why"]}
            for i in settled
            if i.status == "disputed"
        ],
        "won_by_one_path": [
            {"id": i.id, "path": i.meta["settled"]["path"], "why": i.meta["settled"]["why"]}
            for i in settled
            if i.meta["settled"]["path"] in ("tables", "rules")
        ],
        "corrections": applied,
    }
    if all_gaps:  # numbers missing between printed ones (files[].gaps), each a stub on the review page
        report["missing_numbers"] = sum(g["count"] for g in all_gaps)
    report["settled"]["disputed"] = report["settled"].pop("None")
    return settled, report


def extract_pdfs(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    source: str,
    bank: str | None = None,
    workers: int | None = None,
    n_options: int | None = N_OPTIONS,
    pilot_per_bank: int = 20,
    seed: int,
    corrections: str | Path | None = None,
    review_dir: str | Path | None = None,
    page_timeout: float | None = PAGE_TIMEOUT_S,
) -> dict[str, Any]:
    """Extract ``paths`` into ``out_dir/items.jsonl`` and ``out_dir/verification.json``; return the report.

    Nothing is written unless every file extracts; each output is replaced atomically. With
    ``review_dir``, also writes the review page of the disputed items there.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError("output folder is an existing file", file=str(out))
    items, report = extract_items(
        paths,
        source=source,
        bank=bank,
        workers=workers,
        n_options=n_options,
        pilot_per_bank=pilot_per_bank,
        seed=seed,
        corrections=corrections,
        page_timeout=page_timeout,
    )
    if review_dir is not None:
        from blindmcq.corpus.review import write_review

        gaps = [{"file": f["file"], **g} for f in report["files"] for g in f.get("gaps", [])]
        write_review(items, [Path(p) for p in paths], review_dir, gaps)
    write_items(out / ITEMS_FILE, items)
    write_text(out / VERIFICATION_FILE, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    return report
