"""Reading a JSON Lines file line by line, each bad line stopping with one error that names the file and
line: the one reader under the predictions, the generic bank loader and lm-eval's samples. A line is read
at most ``max_line_bytes`` far (``MAX_LINE_BYTES`` by default), so memory stays bounded by one line
whatever the file holds; a longer line is one error saying so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from blindmcq.errors import InputError

# one line at most (a 4 MiB answer, a 10 MB statute excerpt in an option fit well within it)
MAX_LINE_BYTES = 64 * 2**20


def jsonl_records(
    path: str | Path, *, objects: bool = True, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-blank line. Bytes that are not UTF-8 and text that is not
    JSON (or nested too deeply to parse) are an InputError naming the file, the line and what is wrong;
    with ``objects`` a value that is not a JSON object is one too; so is a line longer than
    ``max_line_bytes`` (read no further than that)."""
    with Path(path).open("rb") as fh:
        number = 0
        while raw := fh.readline(max_line_bytes + 1):
            number += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):  # the newline is not the line's
                raise InputError(
                    f"longer than {max_line_bytes:,} bytes: beyond what is read (max_line_bytes)",
                    file=str(path),
                    line=number,
                )
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                what = f"not UTF-8 (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})"
                raise InputError(what, file=str(path), line=number) from None
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=str(path), line=number) from None
            except RecursionError:  # nesting deeper than the interpreter's stack
                raise InputError("JSON nested too deeply to read", file=str(path), line=number) from None
            if objects and not isinstance(value, dict):
                raise InputError("expected a JSON object", file=str(path), line=number)
            yield number, value
