"""Extract the Commission's PDFs by both paths, pages in parallel; write items and verification.

Outputs in ``out_dir`` (written only when every file succeeded, each atomically):
- ``items.jsonl``: path 1's items (the table parser's), with ``meta.confirmed`` = per-field agreement of
  path 2, ``meta.primary_path``; an item only path 2 found is kept with ``primary_path: "rules"``.
- ``verification.json``: the report of :func:`blindmcq.corpus.verify.compare` plus per-file facts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
from pdfplumber.page import Page

from blindmcq.atomic import write_text
from blindmcq.corpus import path_rules, path_tables
from blindmcq.corpus.assemble import assemble
from blindmcq.corpus.rows import Row
from blindmcq.corpus.verify import compare
from blindmcq.errors import InputError
from blindmcq.items import Item, write_items

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


@dataclasses.dataclass
class ChunkResult:
    rows: dict[str, list[Row]]
    error: tuple[int, str] | None = None  # (page, message)


def read_chunk(path: str, start: int, stop: int, methods: tuple[str, ...]) -> ChunkResult:
    """Rows of pages ``start+1 .. stop`` (1-based) by each named method; a page error is returned."""
    result = ChunkResult({m: [] for m in methods})
    page_no = start + 1
    try:
        with pdfplumber.open(path, pages=list(range(start + 1, stop + 1))) as pdf:
            for page in pdf.pages:
                page_no = page.page_number
                for m in methods:
                    result.rows[m].extend(METHODS[m](page, page_no))
                page.close()
    except Exception as exc:  # a bad page stops the file; the caller names file and page
        result.error = (page_no, f"{type(exc).__name__}: {exc}")
    return result


@dataclasses.dataclass
class FileRows:
    path: Path
    n_pages: int
    rows: dict[str, list[Row]]  # by method, in page order


def read_rows(
    paths: Sequence[Path], *, methods: tuple[str, ...] = ("tables", "rules"), workers: int | None = None
) -> list[FileRows]:
    """Each file's rows by each method, pages read in parallel chunks; InputError on any bad page."""
    counts = [page_count(p) for p in paths]
    workers = workers or default_workers()
    tasks: list[tuple[int, int, int]] = []
    for f, n in enumerate(counts):
        size = max(1, min(25, math.ceil(n / (workers * 4))))
        tasks += [(f, s, min(n, s + size)) for s in range(0, n, size)]
    args = [(str(paths[f]), s, e, methods) for f, s, e in tasks]
    if workers == 1 or len(tasks) == 1:
        results = [read_chunk(*a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(read_chunk, *zip(*args, strict=True)))
    out = [FileRows(p, n, {m: [] for m in methods}) for p, n in zip(paths, counts, strict=True)]
    for (f, _, _), res in zip(tasks, results, strict=True):
        if res.error:
            raise InputError(f"page could not be read: {res.error[1]}", file=str(paths[f]), page=res.error[0])
        for m in methods:
            out[f].rows[m].extend(res.rows[m])
    return out


def bank_name(path: Path, source: str) -> str:
    """Bank from the file name: the stem, less a leading ``{source}-``."""
    stem = path.stem
    bank = stem[len(source) + 1 :] if stem.startswith(f"{source}-") else stem
    if not bank:
        raise InputError("cannot derive a bank name from the file name; pass one", file=str(path))
    return bank


def _merge(primary: list[Item], secondary: list[Item], confirmed: dict[str, dict[str, bool]]) -> list[Item]:
    seen = {i.id for i in primary}
    merged = [dataclasses.replace(i, meta={**i.meta, "primary_path": "tables"}) for i in primary]
    merged += [
        dataclasses.replace(i, meta={**i.meta, "primary_path": "rules"})
        for i in secondary
        if i.id not in seen
    ]
    for item in merged:
        item.meta["confirmed"] = confirmed[item.id]
    return merged


def extract_items(
    paths: Sequence[str | Path],
    *,
    source: str,
    bank: str | None = None,
    workers: int | None = None,
    n_options: int | None = 4,
    pilot_per_bank: int = 20,
    seed: int = 0,
) -> tuple[list[Item], dict[str, Any]]:
    """Items (path 1 primary, confirmed by path 2) and the verification report; writes nothing."""
    files = [Path(p) for p in paths]
    if not files:
        raise InputError("no PDF given")
    report_files: list[dict[str, Any]] = []
    owner: dict[str, str] = {}
    by_path: dict[str, list[Item]] = {"tables": [], "rules": []}
    for fr in read_rows(files, workers=workers):
        path, rows = fr.path, fr.rows
        if not rows["tables"] and not rows["rules"]:
            raise InputError("no ruled question table found on any page", file=str(path))
        name = bank or bank_name(path, source)
        found = {
            m: assemble(rows[m], source=source, bank=name, file=path.name, n_options=n_options) for m in rows
        }
        for item in found["tables"] + found["rules"]:
            if owner.setdefault(item.id, str(path)) != str(path):
                raise InputError(f"item id {item.id} also comes from {owner[item.id]}", file=str(path))
        with_table = {r.page for m in rows for r in rows[m]}
        report_files.append(
            {
                "file": path.name,
                "bank": name,
                "pages": fr.n_pages,
                "items_path1": len(found["tables"]),
                "items_path2": len(found["rules"]),
                "pages_without_table": sorted(set(range(1, fr.n_pages + 1)) - with_table),
            }
        )
        for m in by_path:
            by_path[m] += found[m]
    report, confirmed = compare(by_path["tables"], by_path["rules"], per_bank=pilot_per_bank, seed=seed)
    items = _merge(by_path["tables"], by_path["rules"], confirmed)
    report = {"source": source, "files": report_files, **report}
    return items, report


def extract_pdfs(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    source: str,
    bank: str | None = None,
    workers: int | None = None,
    n_options: int | None = 4,
    pilot_per_bank: int = 20,
    seed: int = 0,
) -> dict[str, Any]:
    """Extract ``paths`` into ``out_dir/items.jsonl`` and ``out_dir/verification.json``; return the report.

    Nothing is written unless every file extracts; each output is replaced atomically.
    """
    items, report = extract_items(
        paths,
        source=source,
        bank=bank,
        workers=workers,
        n_options=n_options,
        pilot_per_bank=pilot_per_bank,
        seed=seed,
    )
    out = Path(out_dir)
    write_items(out / ITEMS_FILE, items)
    write_text(out / VERIFICATION_FILE, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    return report
