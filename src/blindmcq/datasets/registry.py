"""One entry point for every bank: ``load_dataset(cfg)`` dispatches on ``cfg["loader"]``.

``cfg`` is the Hydra ``dataset`` group as a plain dict (``conf/dataset/*.yaml``): ``name``,
``loader``, ``path`` (or ``paths``), and the loader's own selection keys. Relative paths resolve
against ``root`` (the project root; default the working directory). Common to every loader:
``limit`` (keep the first n items in published order; for smoke runs); ``dep`` and ``description``
are for DVC and people, and ignored here. Any other unknown key is a ConfigError, so a typo does not
silently select the whole bank. Every bank comes back checked: valid records and unique ids.
"""

from __future__ import annotations

import glob
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from blindmcq.datasets.items import Item, read_items, validate_item
from blindmcq.errors import ConfigError, InputError

Loader = Callable[[Mapping[str, Any], Path], list[Item]]
# dep: for DVC; language: for lexical search (statutes/language.py), not the loaders
COMMON_KEYS = {"name", "loader", "path", "paths", "limit", "description", "dep", "language"}


def _path(cfg: Mapping[str, Any], root: Path) -> Path:
    if not cfg.get("path"):
        raise ConfigError("dataset.path", f"loader {cfg.get('loader')!r} needs a path")
    return root / str(cfg["path"])


def _paths(cfg: Mapping[str, Any], root: Path) -> list[Path]:
    """``paths`` (a list; entries may be globs, expanded in sorted order) or ``path``."""
    raw = cfg.get("paths") or ([cfg["path"]] if cfg.get("path") else [])
    if not raw:
        raise ConfigError("dataset.paths", f"loader {cfg.get('loader')!r} needs path or paths")
    found: list[Path] = []
    for entry in [raw] if isinstance(raw, str) else raw:
        pattern = str(root / str(entry))
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not matches:
            raise InputError("no file matches the pattern", file=pattern)
        found += [Path(m) for m in matches]
    return found


def _options(cfg: Mapping[str, Any], allowed: set[str]) -> dict[str, Any]:
    unknown = set(cfg) - COMMON_KEYS - allowed
    if unknown:
        raise ConfigError(
            f"dataset.{sorted(unknown)[0]}",
            f"not a key of loader {cfg['loader']!r}; known: {sorted(allowed)}",
        )
    return {k: cfg[k] for k in allowed if k in cfg}


def _customs(cfg: Mapping[str, Any], root: Path) -> list[Item]:
    from blindmcq.datasets.customs import load_customs

    return load_customs(_path(cfg, root), **_options(cfg, {"parts", "acts", "competencies", "levels"}))


def _lexam(cfg: Mapping[str, Any], root: Path) -> list[Item]:
    from blindmcq.datasets.lexam import load_lexam

    return load_lexam(_path(cfg, root), **_options(cfg, {"n_options"}))


def _generic(cfg: Mapping[str, Any], root: Path) -> list[Item]:
    from blindmcq.datasets.generic import load_generic

    keys = {"source", "bank", "format", "question", "options", "option_columns", "key", "key_format"}
    return load_generic(_path(cfg, root), **_options(cfg, keys | {"labels", "id", "meta_columns", "header"}))


def _items(cfg: Mapping[str, Any], root: Path) -> list[Item]:
    _options(cfg, set())
    return [item for path in _paths(cfg, root) for item in read_items(path)]


def _delegate(module_name: str, function: str, what: str) -> Callable[..., Any]:
    """A function of a module another part of the project provides, or a clear error."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            "dataset.loader", f"{what} needs {module_name}, which is not available: {exc}"
        ) from exc
    if not hasattr(module, function):
        raise ConfigError("dataset.loader", f"{what}: {module_name} has no {function}()")
    return getattr(module, function)


def _nonsense(cfg: Mapping[str, Any], root: Path) -> list[Item]:
    """Generated NonsenseQA; ``split`` picks the probed ``test`` items (default) or the ``fewshot`` pool."""
    generate = _delegate("blindmcq.datasets.nonsense", "generate_nonsenseqa", "loader 'nonsense'")
    options = _options(cfg, {"seed", "n_test", "n_fewshot", "n_options", "split"})
    split = options.pop("split", "test")
    if split not in ("test", "fewshot"):
        raise ConfigError("dataset.split", f"expected test or fewshot, got {split!r}")
    try:
        bank = generate(**options)
    except ValueError as exc:
        raise ConfigError("dataset", f"NonsenseQA: {exc}") from exc
    return list(getattr(bank, split))


def _pdf(cfg: Mapping[str, Any], root: Path) -> list[Item]:
    """Items of the Commission-style PDFs, the corpus stage's way (``datasets.pdf.read_pdf_bank``: path 1
    confirmed by path 2, the reviewed corrections applied); the report is the corpus stage's."""
    read = _delegate("blindmcq.datasets.pdf", "read_pdf_bank", "loader 'pdf'")
    _options(cfg, {"source", "bank", "workers", "n_options", "pilot_per_bank", "seed", "corrections"})
    if "source" not in cfg:
        raise ConfigError("dataset.source", "loader 'pdf' needs the id source (e.g. dmsu)")
    items, _report = read(cfg, root=root)
    return list(items)


LOADERS: dict[str, Loader] = {
    "customs": _customs,
    "lexam": _lexam,
    "generic": _generic,
    "items": _items,
    "nonsense": _nonsense,
    "pdf": _pdf,
}


def load_dataset(cfg: Mapping[str, Any], *, root: str | Path | None = None) -> list[Item]:
    """The bank ``cfg`` describes, as items in published order (see module docstring)."""
    if not isinstance(cfg, Mapping):
        raise ConfigError("dataset", f"expected a mapping, got {type(cfg).__name__}")
    loader = cfg.get("loader")
    if loader not in LOADERS:
        raise ConfigError("dataset.loader", f"unknown loader {loader!r}; expected one of {sorted(LOADERS)}")
    items = LOADERS[loader](cfg, Path.cwd() if root is None else Path(root))
    limit = cfg.get("limit")
    if limit is not None:
        if not isinstance(limit, int) or limit < 0:
            raise ConfigError("dataset.limit", f"expected a non-negative integer, got {limit!r}")
        items = items[:limit]
    seen: set[str] = set()
    for item in items:
        validate_item(item, file=item.file)
        if item.id in seen:
            raise InputError("duplicate item id across the dataset's files", file=item.file, item=item.id)
        seen.add(item.id)
    return items
