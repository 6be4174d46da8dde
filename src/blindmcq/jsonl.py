"""Reading a JSON Lines file line by line, each bad line stopping with one error that names the file and
line: the one reader under the predictions, the generic bank loader and lm-eval's samples."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from blindmcq.errors import InputError


def jsonl_records(path: str | Path, *, objects: bool = True) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-blank line. Bytes that are not UTF-8 and text that is not
    JSON (or nested too deeply to parse) are an InputError naming the file, the line and what is wrong;
    with ``objects`` a value that is not a JSON object is one too."""
    with Path(path).open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
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
