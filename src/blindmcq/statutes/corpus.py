"""Statute corpus loaders: the provisions JSONL as shipped (plain or .xz), or a folder of plain-text acts.

JSONL: one JSON object a line with string fields ``act, act_title, status, issued, ref, title, text``
(``issued`` is the edition date, ISO ``YYYY-MM-DD``). An empty or malformed line stops the load with
the file and line number. The shipped corpus repeats a few (act, ref) pairs (594 of 51,741), so
provisions are identified by their position, not by (act, ref).

Folder of plain-text acts (`read_text_acts`), one UTF-8 ``<act id>.txt`` per act:
- the first non-blank line is the act title;
- an optional header line ``issued: YYYY-MM-DD`` (or ``редакція: YYYY-MM-DD``) before the first article
  gives the edition date; otherwise it is empty;
- every line starting ``Стаття N.`` (N may be ``8-1``) opens a provision with ref ``artN`` and that line
  as its title; the lines up to the next heading are its text;
- other header lines before the first article form a provision with ref ``preamble``;
- a file with no article heading, or a repeated article number, is an InputError naming file and line.
Status is ``unknown`` for text acts.
"""

from __future__ import annotations

import json
import lzma
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from blindmcq.errors import InputError

FIELDS = ("act", "act_title", "status", "issued", "ref", "title", "text")
_HEADING_RE = re.compile(r"^\s*Стаття\s+(\d+(?:[-‑–]\d+)?)\b\.?")
_ISSUED_RE = re.compile(r"^\s*(?:issued|редакція)\s*:\s*(\d{4}-\d{2}-\d{2})\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Provision:
    """One provision with its provenance: act id, reference in the act, edition date (``issued``)."""

    act: str
    act_title: str
    status: str
    issued: str
    ref: str
    title: str
    text: str

    @property
    def document(self) -> str:
        """The text the index sees: heading and body."""
        return f"{self.title}\n{self.text}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _parse_line(line: str, file: str, lineno: int) -> Provision:
    if not line.strip():
        raise InputError("empty line in provisions file", file=file, line=lineno)
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg}", file=file, line=lineno) from exc
    if not isinstance(record, dict):
        raise InputError("a provision must be a JSON object", file=file, line=lineno)
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise InputError(f"missing field(s) {', '.join(missing)}", file=file, line=lineno)
    wrong = [f for f in FIELDS if not isinstance(record[f], str)]
    if wrong:
        raise InputError(f"field(s) {', '.join(wrong)} must be strings", file=file, line=lineno)
    return Provision(**{f: record[f] for f in FIELDS})


def iter_jsonl(path: str | Path) -> Iterator[Provision]:
    """Provisions of a JSONL file (``.jsonl`` or ``.jsonl.xz``), in file order."""
    path = Path(path)
    if not path.is_file():
        raise InputError("provisions file not found", file=str(path))
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            yield _parse_line(line, str(path), lineno)


def _parse_text_act(path: Path) -> list[Provision]:
    act = path.stem
    lines = path.read_text(encoding="utf-8").splitlines()
    act_title, issued, preamble = "", "", []
    provisions: list[tuple[str, str, list[str]]] = []
    seen: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        heading = _HEADING_RE.match(line)
        if heading:
            ref = "art" + re.sub(r"[‑–]", "-", heading.group(1))
            if ref in seen:
                raise InputError(f"repeated article heading {ref}", file=str(path), line=lineno)
            seen.add(ref)
            provisions.append((ref, line.strip(), []))
        elif provisions:
            provisions[-1][2].append(line)
        elif not act_title and line.strip():
            act_title = line.strip()
        elif (date := _ISSUED_RE.match(line)) is not None:
            issued = date.group(1)
        else:
            preamble.append(line)
    if not provisions:
        raise InputError("no 'Стаття N' heading found", file=str(path))
    out = []
    if "\n".join(preamble).strip():
        out.append(("preamble", act_title, preamble))
    out.extend(provisions)
    return [
        Provision(act, act_title, "unknown", issued, ref, title, "\n".join(body).strip())
        for ref, title, body in out
    ]


def read_text_acts(folder: str | Path) -> list[Provision]:
    """Provisions of every ``*.txt`` act in a folder, acts in file-name order."""
    folder = Path(folder)
    files = sorted(folder.glob("*.txt"))
    if not files:
        raise InputError("no .txt acts in folder", file=str(folder))
    return [p for f in files for p in _parse_text_act(f)]


def read_provisions(source: str | Path, acts: set[str] | None = None) -> list[Provision]:
    """Provisions from a JSONL file (plain or .xz) or a folder of text acts; optionally only some acts."""
    source = Path(source)
    provisions = read_text_acts(source) if source.is_dir() else iter_jsonl(source)
    selected = [p for p in provisions if acts is None or p.act in acts]
    missing = sorted((acts or set()) - {p.act for p in selected})
    if missing:
        raise InputError(f"act(s) not in the corpus: {', '.join(missing)}", file=str(source))
    if not selected:
        raise InputError("no provisions", file=str(source))
    return selected
