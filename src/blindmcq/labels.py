"""Label schemes as shown to a model: the symbols of each slot and the option line (SPEC, "Presentations").

A leaf (it imports only ``errors``): the presenter (``tasks/presentations.py``) and the generated
NonsenseQA bank (``datasets/nonsense.py``) both label options, and a dataset must not load the tasks
or the backends for it (the corpus stage's deps stay off ``backends/`` and ``tasks/``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindmcq.errors import ConfigError

# The option line a labels config uses when it names none (conf/labels/*.yaml ``line``; the schema's default).
DEFAULT_LINE = "{label}) {text}"


def label_symbols_by_scheme(schemes: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """The symbols of every scheme a label can be answered in, ``{"latin": ["A", ...], ...}``: the
    ``symbols`` argument of parsing, from the label scheme configs (``config.files.load_label_schemes``).
    Uniform schemes (the dash) are left out: the md matcher reads those."""
    return {
        str(cfg.get("name", name)): [str(s) for s in cfg["symbols"]]
        for name, cfg in schemes.items()
        if not cfg.get("uniform")
    }


def label_strings(labels: Mapping[str, Any], n: int) -> tuple[str, ...]:
    """The labels of the first n slots; a ``uniform`` scheme (the dash) repeats its one symbol."""
    name = labels.get("name", "?")
    symbols = [str(s) for s in labels.get("symbols") or ()]
    if not symbols:
        raise ConfigError(f"labels.{name}.symbols", "empty")
    if labels.get("uniform"):
        return (symbols[0],) * n
    if len(symbols) < n:
        raise ConfigError(f"labels.{name}.symbols", f"{len(symbols)} symbols, an item has {n} options")
    return tuple(symbols[:n])


def label_list(labels: Sequence[str], or_word: str) -> str:
    """``"А, Б, В або Г"``: comma-separated, the last two joined by ``or_word``."""
    if len(labels) == 1:
        return labels[0]
    return f"{', '.join(labels[:-1])} {or_word} {labels[-1]}"


def option_line(labels: Mapping[str, Any]) -> str:
    """The scheme's option-line template (``line``), else :data:`DEFAULT_LINE`."""
    return str(labels.get("line", DEFAULT_LINE))
