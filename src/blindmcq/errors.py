"""Errors that name the offending input, so a user can find and fix it."""

from __future__ import annotations


class BlindMCQError(Exception):
    """Base class for every error this package raises on purpose."""


def one_line(text: str) -> str:
    """An error is one line: line breaks that come with a key or value (a YAML key may hold one) are
    shown escaped."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


class InputError(BlindMCQError):
    """Bad input: the message names the file and, where known, the page, line or item."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        page: int | None = None,
        line: int | None = None,
        item: str | None = None,
    ) -> None:
        self.file, self.page, self.line, self.item = file, page, line, item
        where = [
            f"{name} {value}"
            for name, value in (("file", file), ("page", page), ("line", line), ("item", item))
            if value is not None
        ]
        super().__init__(one_line(f"{', '.join(where)}: {message}" if where else message))


class ConfigError(BlindMCQError):
    """A configuration value is missing or wrong; the message names the key."""

    def __init__(self, key: str, message: str, *, file: str | None = None) -> None:
        self.key, self.file = key, file
        # With the file: "params.yaml: probe.smaple: unknown key; ..." (the schema's one line).
        super().__init__(one_line(f"{file}: {key}: {message}" if file else f"config key '{key}': {message}"))


def os_error_line(exc: OSError) -> str:
    """One line for a failed write or read (a full or read-only disk): the path and the system's reason."""
    where = exc.filename if exc.filename is not None else "?"
    reason = exc.strerror or str(exc) or type(exc).__name__
    return one_line(f"file {where}: {reason}")
