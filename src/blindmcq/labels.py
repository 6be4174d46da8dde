"""Label schemes as shown to a model: the symbols of each slot, how a scheme goes on past them, and the
option line (SPEC, "Presentations").

A leaf (it imports only ``errors``): the presenter (``tasks/presentations.py``), the generated NonsenseQA
bank (``datasets/nonsense.py``), letter keys past Z (``datasets/generic.py``) and the names of slots in
tables (``analysis/tables.slot_name``) all use it, and a dataset must not load the tasks or the backends
for it (the corpus stage's deps stay off ``backends/`` and ``tasks/``).

``combined(symbols, n)``: the first n labels made of ``symbols`` the way spreadsheet columns go on (A..Z,
AA..AZ, BA.., ZZ, AAA..): the label of slot i is the bijective base-len(symbols) numeral of i + 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from blindmcq.errors import ConfigError

# The option line a labels config uses when it names none (conf/labels/*.yaml ``line``; the schema's default).
DEFAULT_LINE = "{label}) {text}"
EXTENSIONS = ("none", "combine", "count")  # how a scheme goes on past its listed symbols (``extend``)


class Scheme(Protocol):
    """A label scheme as ``config.schema.Labels`` types it (a leaf cannot import the schema, which
    imports this module): callers holding a plain mapping coerce it with ``validate_group("labels", ...)``."""

    @property
    def name(self) -> str: ...
    @property
    def symbols(self) -> Sequence[str]: ...
    @property
    def line(self) -> str: ...
    @property
    def uniform(self) -> bool: ...
    @property
    def extend(self) -> str: ...


def extended_symbols(labels: Scheme, n: int) -> list[str]:
    """At least the first n labels of a scheme: its listed symbols, then, past them, as its ``extend``
    says. ``combine`` goes on like spreadsheet columns (A..Z, AA..AZ, BA.., ZZ, AAA..), so every later
    label is a word of listed symbols that the parser reads whole ("AB" is not "A"); ``count`` goes on
    counting (the symbols must count up by one: 1..26, 27, 28, ...); ``none`` (the default) stops, and
    an item with more options than symbols is a ConfigError naming the scheme."""
    name = labels.name
    symbols = [str(s) for s in labels.symbols]
    if not symbols:
        raise ConfigError(f"labels.{name}.symbols", "empty")
    if labels.uniform or n <= len(symbols):
        return symbols
    extend = labels.extend
    if extend == "count":
        first = int(symbols[0])  # the schema checked they count up from here
        return [*symbols, *(str(first + i) for i in range(len(symbols), n))]
    if extend == "combine":
        return combined(symbols, n)
    if extend != "none":
        raise ConfigError(f"labels.{name}.extend", f"expected one of {list(EXTENSIONS)}, got {extend!r}")
    raise ConfigError(
        f"labels.{name}.symbols",
        f"{len(symbols)} symbols, an item has {n} options, and the scheme does not extend "
        "(set extend: combine or count, or pick labels=latin, cyrillic or numerals, which do)",
    )


def label_symbols_by_scheme(schemes: Mapping[str, Scheme], n: int = 0) -> dict[str, list[str]]:
    """The symbols of every scheme a label can be answered in, ``{"latin": ["A", ...], ...}``: the
    ``symbols`` argument of parsing, from the label scheme configs (``config.files.load_label_schemes``),
    each extended to ``n`` labels where it extends (``extended_symbols``), so an answer "AF" to a
    32-option item is read. Uniform schemes (the dash) are left out: the md matcher reads those."""
    out: dict[str, list[str]] = {}
    for scheme in schemes.values():
        if scheme.uniform:
            continue
        try:
            out[scheme.name] = extended_symbols(scheme, n)
        except ConfigError:  # a scheme that stops short still tells its own labels apart as other_scheme
            out[scheme.name] = [str(s) for s in scheme.symbols]
    return out


def label_strings(labels: Scheme, n: int) -> tuple[str, ...]:
    """The labels of the first n slots; a ``uniform`` scheme (the dash) repeats its one symbol; past the
    listed symbols a scheme goes on as its ``extend`` says (``extended_symbols``)."""
    symbols = extended_symbols(labels, n)
    return (symbols[0],) * n if labels.uniform else tuple(symbols[:n])


def label_list(labels: Sequence[str], or_word: str) -> str:
    """``"А, Б, В або Г"``: comma-separated, the last two joined by ``or_word``."""
    if len(labels) == 1:
        return labels[0]
    return f"{', '.join(labels[:-1])} {or_word} {labels[-1]}"


def combined_label(symbols: Sequence[str], i: int) -> str:
    """The label of slot i (0-based): slot 0 is ``symbols[0]``, slot len(symbols) the first pair."""
    base, digits, k = len(symbols), [], i + 1
    while k:
        k, r = divmod(k - 1, base)
        digits.append(str(symbols[r]))
    return "".join(reversed(digits))


def combined(symbols: Sequence[str], n: int) -> list[str]:
    """The labels of the first ``max(n, len(symbols))`` slots: the symbols, then their combinations."""
    return [*map(str, symbols), *(combined_label(symbols, i) for i in range(len(symbols), n))]


def option_line(labels: Scheme) -> str:
    """The scheme's option-line template (``line``; the schema's default is :data:`DEFAULT_LINE`)."""
    return str(labels.line)
