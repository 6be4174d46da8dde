"""What every command prints for bad input: one line on stderr, exit code 2."""

from __future__ import annotations

import sys


def fail(command: str | None, exc: Exception, where: object = None) -> int:
    """Bad input or a failed read/write as one line on stderr (exit code 2): the error's own line, or for
    an OSError the file (``where`` when the error names none) and the system's reason."""
    prefix = f"blindmcq {command}: error: " if command else "error: "
    if isinstance(exc, OSError):
        text = f"file {exc.filename or where}: {exc.strerror or exc}"
    else:
        text = str(exc)
    print(prefix + text, file=sys.stderr)
    return 2


def warnings_as_lines(command: str) -> None:
    """Show each Python warning as one line, ``blindmcq COMMAND: note: TEXT`` on stderr (its own text,
    credentials masked), not the interpreter's source path and line."""
    import warnings

    from blindmcq.secrets import scrub_text

    def show(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        print(f"blindmcq {command}: note: {scrub_text(str(message), assignments=False)}", file=sys.stderr)

    warnings.showwarning = show
