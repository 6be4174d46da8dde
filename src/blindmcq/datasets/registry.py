"""The one entry point for every bank: its items (:func:`load_dataset`), its items with the verification
report (:func:`read_dataset`) and the corpus written from them (:func:`build_corpus`).

A dataset config is the ``dataset`` group (``conf/dataset/*.yaml``), typed by
:class:`blindmcq.config.schema.Dataset`: one schema per ``loader``, whose defaults live in the schema; a
plain mapping is checked into it once, here (unknown keys and wrong values stop with one ConfigError
naming the key, so a typo does not silently select the whole bank). Relative paths resolve against
``root`` (the project root; default the working directory). Common to every loader: ``limit`` (keep the
first n items in published order; for smoke runs); ``dep`` and ``description`` are for DVC and people.
Every bank comes back checked: valid records and unique ids.

A Commission-style PDF bank (loader ``pdf``) is read one way only, :func:`read_pdf_bank`: the corpus
stage, ``load_dataset``, the capacity planner's sample and ``blindmcq preview`` all come here, so each
sees the same items: both extraction paths settled and the reviewed corrections applied
(``dataset.corrections``; by default the committed ``defaults/corrections.yaml``, when present).
"""

from __future__ import annotations

import glob
import importlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from blindmcq import paths as project_paths
from blindmcq.atomic import write_text
from blindmcq.config.schema import (
    Config,
    CustomsDataset,
    GenericDataset,
    ItemsDataset,
    LexamDataset,
    NonsenseDataset,
    PdfDataset,
    default,
    validate_group,
)
from blindmcq.datasets.items import Item, read_items, skipped_sentence, validate_item, write_items
from blindmcq.errors import ConfigError, InputError

log = logging.getLogger(__name__)

# one of the schema's per-loader dataclasses (config.schema.DATASET_SCHEMAS)
DatasetConfig = CustomsDataset | LexamDataset | GenericDataset | ItemsDataset | NonsenseDataset | PdfDataset
Loader = Callable[[Any, Path], list[Item]]
DEFAULT_CORRECTIONS = Path(default(PdfDataset, "corrections"))


def _path(cfg: DatasetConfig, root: Path) -> Path:
    if not cfg.path:
        raise ConfigError("dataset.path", f"loader {cfg.loader!r} needs a path")
    return root / str(cfg.path)


def _patterns(cfg: DatasetConfig) -> list[str]:
    """``paths`` (a list or one pattern) or ``path``."""
    raw = cfg.paths or ([cfg.path] if cfg.path else [])
    return [raw] if isinstance(raw, str) else list(raw)


def _paths(cfg: DatasetConfig, root: Path) -> list[Path]:
    """``paths`` (entries may be globs, expanded in sorted order) or ``path``."""
    patterns = _patterns(cfg)
    if not patterns:
        raise ConfigError("dataset.paths", f"loader {cfg.loader!r} needs path or paths")
    found: list[Path] = []
    for entry in patterns:
        pattern = str(root / str(entry))
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not matches:
            raise InputError("no file matches the pattern", file=pattern)
        found += [Path(m) for m in matches]
    return found


def _set(**options: Any) -> dict[str, Any]:
    """The options a config sets (None: unset, the loader's own default)."""
    return {k: v for k, v in options.items() if v is not None}


def _customs(cfg: CustomsDataset, root: Path) -> list[Item]:
    from blindmcq.datasets.customs import load_customs

    chosen = _set(parts=cfg.parts, acts=cfg.acts, competencies=cfg.competencies, levels=cfg.levels)
    return load_customs(_path(cfg, root), **chosen)


def _lexam(cfg: LexamDataset, root: Path) -> list[Item]:
    from blindmcq.datasets.lexam import load_lexam

    return load_lexam(_path(cfg, root), n_options=cfg.n_options)


def _generic(cfg: GenericDataset, root: Path) -> list[Item]:
    from blindmcq.datasets.generic import load_generic

    return load_generic(
        _path(cfg, root), source=cfg.source, bank=cfg.bank, format=cfg.format, question=cfg.question,
        options=cfg.options, option_columns=cfg.option_columns, key=cfg.key, key_format=cfg.key_format,
        labels=cfg.labels, id=cfg.id, meta_columns=cfg.meta_columns, header=cfg.header,
        duplicates=cfg.duplicates,
    )  # fmt: skip


def _items(cfg: DatasetConfig, root: Path) -> list[Item]:
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


def _nonsense(cfg: NonsenseDataset, root: Path) -> list[Item]:
    """Generated NonsenseQA; ``split`` picks the probed ``test`` items (default) or the ``fewshot`` pool."""
    generate = _delegate("blindmcq.datasets.nonsense", "generate_nonsenseqa", "loader 'nonsense'")
    try:
        bank = generate(seed=cfg.seed, n_test=cfg.n_test, n_fewshot=cfg.n_fewshot, n_options=cfg.n_options)
    except ValueError as exc:
        raise ConfigError("dataset", f"NonsenseQA: {exc}") from exc
    return list(getattr(bank, cfg.split))


def _pdf(cfg: PdfDataset, root: Path) -> list[Item]:
    """Items of the Commission-style PDFs, the corpus stage's way (:func:`read_pdf_bank`)."""
    items, _report = read_pdf_bank(cfg, root=root)
    return list(items)


LOADERS: dict[str, Loader] = {
    "customs": _customs,
    "lexam": _lexam,
    "generic": _generic,
    "items": _items,
    "nonsense": _nonsense,
    "pdf": _pdf,
}


def load_dataset(cfg: DatasetConfig, *, root: str | Path | None = None) -> list[Item]:
    """The bank ``cfg`` describes, as items in published order (see module docstring)."""
    items = LOADERS[cfg.loader](cfg, Path.cwd() if root is None else Path(root))
    if cfg.limit is not None:
        items = items[: cfg.limit]
    seen: set[str] = set()
    for item in items:
        validate_item(item, file=item.file)
        if item.id in seen:
            raise InputError("duplicate item id across the dataset's files", file=item.file, item=item.id)
        seen.add(item.id)
    return items


# ---------------------------------------------------------------- the PDF bank


def _root(root: str | Path | None) -> Path:
    return Path() if root is None else Path(root)


def pdf_paths(dataset: PdfDataset, root: str | Path | None = None) -> list[Path]:
    """The PDFs ``paths`` (globs) or ``path`` name, relative to ``root`` (default: the working directory)."""
    patterns = _patterns(dataset)
    base = _root(root)
    found = sorted({Path(p) for pattern in patterns for p in glob.glob(str(base / str(pattern)))})
    if not found:
        raise ConfigError("dataset.paths", f"no PDF matches {patterns}")
    return found


def corrections_path(dataset: PdfDataset, root: str | Path | None = None) -> Path | None:
    """``dataset.corrections`` (null: none); by default the committed reviewed corrections, when present."""
    named = dataset.corrections
    if not named:
        return None
    path = _root(root) / named
    # the schema's default names a file a checkout may lack (then: no corrections), a chosen one must exist
    return None if Path(named) == DEFAULT_CORRECTIONS and not path.is_file() else path


def expected_options(dataset: PdfDataset) -> int:
    """``dataset.n_options``: the options every item of the bank should have (null: the Commission's 4).

    The extractor checks each item against it and uses it to settle option rows split by a page break."""
    from blindmcq.corpus.extract import N_OPTIONS

    value = dataset.n_options  # the schema checks it (a whole number of at least 2)
    return N_OPTIONS if value is None else value


def read_pdf_bank(
    cfg: PdfDataset, *, root: str | Path | None = None, seed: int | None = None
) -> tuple[list[Item], dict[str, Any]]:
    """The bank's items (corrections applied) and the verification report. ``seed`` draws the report's
    pilot sample (default the dataset's own ``seed``; the corpus stage passes the run's)."""
    from blindmcq.corpus.extract import extract_items

    return extract_items(
        pdf_paths(cfg, root),
        source=cfg.source,
        bank=cfg.bank,
        n_options=expected_options(cfg),
        seed=cfg.seed if seed is None else seed,
        corrections=corrections_path(cfg, root),
        # unset: the extractor's own default
        **_set(workers=cfg.workers, pilot_per_bank=cfg.pilot_per_bank),
    )


# ---------------------------------------------------------------- the corpus


def read_dataset(cfg: DatasetConfig, seed: int) -> tuple[list[Item], dict[str, Any]]:
    """The items of any dataset config and their verification report: the corpus stage's way (a PDF
    bank through :func:`read_pdf_bank`, corrections applied; any other loader through ``load_dataset``)."""
    if isinstance(cfg, PdfDataset):
        return read_pdf_bank(cfg, seed=seed)
    items = load_dataset(cfg)
    report = {
        "source": cfg.name or None,  # an unnamed config said null before the schema's "" default
        "loader": cfg.loader,
        "n_items": len(items),
        "status": dict(Counter(item.status for item in items)),
        "flags": dict(Counter(flag for item in items for flag in item.flags)),
        "note": "read from a structured bank file: a single extraction path, nothing to cross-check",
    }
    if any(not item.usable for item in items):  # each skipped item with its reason, in one line
        report["skipped"] = skipped_sentence(items)
        log.warning("%s: %s", cfg.name or cfg.loader, report["skipped"])
    return items, report


def bank_files(cfg: DatasetConfig, root: str | Path | None = None) -> list[Path]:
    """The files a dataset config reads, relative to ``root`` (default: the working directory): a PDF
    bank's PDFs and the reviewed corrections it applies, a structured bank's file(s); none for a
    generated bank (NonsenseQA)."""
    base = _root(root)
    if isinstance(cfg, PdfDataset):
        corrections = corrections_path(cfg, base)
        return pdf_paths(cfg, base) + ([corrections] if corrections is not None else [])
    if isinstance(cfg, NonsenseDataset):
        return []
    if isinstance(cfg, ItemsDataset):
        return _paths(cfg, base)
    return [_path(cfg, base)]


def bank_digests(dataset: DatasetConfig, root: str | Path | None = None) -> dict[str, str]:
    """sha256 of every file the dataset reads (``bank_files``), by its path relative to ``root``."""
    from blindmcq.datasets.fingerprint import file_digests

    return file_digests(bank_files(dataset, root), _root(root))


def build_corpus(
    dataset: Mapping[str, Any], out_dir: Path, seed: int = default(Config, "seed")
) -> dict[str, Any]:
    """Write items.jsonl, verification.json and fingerprint.json for a dataset config (the mapping as
    ``params.yaml`` holds it: the fingerprint hashes it as written, and the bytes of the files it reads);
    returns the verification report."""
    from blindmcq.datasets.fingerprint import FINGERPRINT_NAME, write_fingerprint

    out = Path(out_dir)
    (out / FINGERPRINT_NAME).unlink(missing_ok=True)  # a failed build leaves no stale claim
    cfg = validate_group("dataset", dataset)  # checked here: the fingerprint hashes the mapping as written
    digests = bank_digests(cfg)  # before reading: a file edited during the build is caught next time
    items, report = read_dataset(cfg, seed)  # nothing is written unless the whole bank reads
    write_items(out / project_paths.ITEMS.name, items)
    write_text(out / project_paths.VERIFICATION.name, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    write_fingerprint(out, dataset, seed, digests)  # which config and files these items come from
    return report


def corpus_mismatch(config: Config, items_path: Path) -> str | None:
    """None when the corpus beside ``items_path`` was built from ``config``'s dataset config and the bank
    files as they are now (``datasets.fingerprint``); else why not, in a few words."""
    from blindmcq.datasets.fingerprint import mismatch, read_fingerprint

    record = read_fingerprint(items_path)
    if isinstance(record, str):
        return record
    dataset = config.group("dataset")  # a config without one is named, not reported as a mismatch
    try:
        digests = bank_digests(dataset)
    except (ConfigError, InputError, OSError) as exc:
        return f"the bank files {items_path} was built from cannot be read now ({str(exc).splitlines()[0]})"
    return mismatch(record, items_path, config, digests)


# The loaders whose banks print their keys as Ukrainian exam letters (А, Б, В, Г: the Commission's PDFs,
# whose key column corpus/assemble reads in that alphabet, and the Customs Service's own bank)
CYRILLIC_KEYED = ("pdf", "customs")


def bank_key_labels(cfg: DatasetConfig, n: int, root: str | Path | None = None) -> list[str]:
    """The bank's own label of each of its ``n`` slots, for naming slots to a reader (tables, reports):
    Ukrainian exam letters for the Cyrillic-keyed loaders, a generic bank's declared ``labels`` or the
    script of its first key (read from the file when it is there), Latin letters for the rest (LEXam,
    NonsenseQA, a corpus); none (by position) for a generic bank keyed by index or text."""
    from blindmcq.datasets.generic import LATIN, UKRAINIAN, bank_format, peek, slot_labels

    if n < 1:
        return []
    if cfg.loader in CYRILLIC_KEYED:
        return slot_labels("label", UKRAINIAN, None, n)
    if not isinstance(cfg, GenericDataset):
        return slot_labels("label", LATIN, None, n)
    first = None
    if cfg.key_format == "label" and not cfg.labels and cfg.path and cfg.key:
        path = _root(root) / str(cfg.path)
        try:
            _, records = peek(path, bank_format(path, cfg.format), cfg.header, n=1)
        except (InputError, ConfigError, OSError):
            records = []  # a release without the bank file: the slots go by position
        first = next((str(r.get(cfg.key)) for r in records if r.get(cfg.key) is not None), None)
    return slot_labels(cfg.key_format, cfg.labels, first, n)
