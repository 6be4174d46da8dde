"""``blindmcq export lm-eval|inspect BANK --out DIR``: the blind probe of a bank as a harness task.

BANK is a blindmcq corpus (``results/corpus/items.jsonl``) or any bank ``blindmcq audit`` reads (CSV,
JSONL, Parquet; the same ``--no-header/--question/--options/--key/--key-format`` mapping, so the items
get the same ids). The probe's seeded sample (``--sample``, ``--seed``: the probe config's 60 and 0) is
presented as ``blindmcq.tasks.probe`` presents it under the named phrasing, labels, reasoning,
condition and protocol (``conf/<group>/<name>.yaml``), or under those of a composed ``--params
params.yaml``: blind over the 2N orders, full, forced placement. DIR gets the harness's task files,
``items.jsonl`` (the bank's items, for the audit report of imported answers) and ``manifest.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindmcq import __version__
from blindmcq.atomic import write_text
from blindmcq.datasets.items import Item, read_items, write_items
from blindmcq.errors import BlindMCQError, ConfigError, InputError
from blindmcq.harnesses.documents import HARNESSES, ProbeConfig, build_documents
from blindmcq.tasks.presentations import label_symbols_by_scheme
from blindmcq.tasks.probe import sample_items

GROUPS = ("prompt", "labels", "reasoning", "condition", "protocol")
DEFAULTS = {
    "prompt": "original",
    "labels": "latin",
    "reasoning": "direct",
    "condition": "default",
    "protocol": "sl",
}  # fmt: skip  (conf/config.yaml's defaults)
DEFAULT_SAMPLE, DEFAULT_SEED = 60, 0  # conf/probe/default.yaml
MANIFEST = "manifest.json"


def is_corpus(path: Path) -> bool:
    """A blindmcq corpus file: JSON lines whose first record has an ``id``, ``options`` and a ``status``."""
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    return isinstance(record, dict) and {"id", "options", "status"} <= set(record)
    except (OSError, ValueError):
        return False
    return False


def load_bank(path: Path, mapping: Any) -> list[Item]:
    """The bank's items: a corpus as written, any other bank through ``blindmcq audit``'s mapping."""
    if is_corpus(path):
        return read_items(path)
    from blindmcq.auditing.audit import read_bank

    items, _, note = read_bank(path, mapping)  # the audit's own reader: ids as the audit's
    if note:
        print(note, file=sys.stderr)
    return items


def export(
    harness: str,
    bank: Path,
    out: Path,
    *,
    config: ProbeConfig,
    mapping: Any,
    sample: int | None,
    seed: int,
    task: str | None = None,
) -> list[Path]:
    """Write the harness task for the probe of ``bank``; returns the files written."""
    from blindmcq.auditing.audit import check_out_dir

    bank, out = Path(bank), Path(out)
    check_out_dir(out)
    items = load_bank(bank, mapping)
    if not any(item.usable for item in items):
        raise InputError("no usable item (every item is malformed or has no key)", file=str(bank))
    probed = sample_items(items, sample, seed, key="--sample")
    docs = build_documents(probed, config, harness)
    out.mkdir(parents=True, exist_ok=True)
    if harness == "lm-eval":
        from blindmcq.harnesses.lm_eval import DEFAULT_TASK, write_task

        files = write_task(out, docs, task=task or DEFAULT_TASK)
    else:
        from blindmcq.harnesses.inspect_task import DEFAULT_TASK as INSPECT_TASK
        from blindmcq.harnesses.inspect_task import write_task as write_inspect

        files = write_inspect(out, docs, task=task or INSPECT_TASK, symbols=symbols_of(config))
    write_items(out / "items.jsonl", items)
    manifest = {
        "blindmcq": __version__,
        "harness": harness,
        "bank": str(bank),
        "config": config.names(),
        "sample": sample,
        "seed": seed,
        "items": len(items),
        "probed_items": [item.id for item in probed],
        "documents": len(docs),
        "symbols": symbols_of(config),
    }
    write_text(out / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return [*files, out / "items.jsonl", out / MANIFEST]


def symbols_of(config: ProbeConfig) -> dict[str, list[str]]:
    """Every scheme's labels, what an answer in another scheme is told by (``other_scheme``)."""
    return label_symbols_by_scheme(config.label_schemes)


def parse_sample(text: str) -> int | str:
    """``--sample``: a number of items, or ``all`` (every usable item)."""
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of items or 'all', got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blindmcq export",
        description="Write the blind probe of a bank as an lm-evaluation-harness or inspect_ai task "
        "(docs/harnesses.md).",
    )
    parser.add_argument("harness", choices=HARNESSES)
    parser.add_argument("bank", type=Path, metavar="BANK", help="items.jsonl, or a CSV/JSONL/Parquet bank")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the task")
    parser.add_argument("--params", type=Path, metavar="FILE",
                        help="a composed params.yaml: its prompt, labels, reasoning, condition, protocol, "
                        "probe.sample and probe.seed")  # fmt: skip
    for group in GROUPS:
        parser.add_argument(
            f"--{group}", metavar="NAME", help=f"the {group} config NAME (default {DEFAULTS[group]})"
        )
    sample_help = f"items probed, seeded ('all': every usable one; default {DEFAULT_SAMPLE})"
    parser.add_argument("--sample", type=parse_sample, metavar="N", help=sample_help)
    parser.add_argument("--seed", type=int, help=f"seed of the sample (default {DEFAULT_SEED})")
    parser.add_argument("--task", metavar="NAME", help="the task's name in the harness")
    mapping = parser.add_argument_group("bank columns (as blindmcq audit; not for a corpus items.jsonl)")
    mapping.add_argument("--no-header", action="store_true", help="a CSV without a header row (MMLU)")
    mapping.add_argument("--question", metavar="COL")
    mapping.add_argument("--options", nargs="+", default=[], metavar="COL")
    mapping.add_argument("--key", metavar="COL")
    mapping.add_argument("--key-format", choices=("index", "label", "text"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import yaml

        from blindmcq.auditing.audit import Mapping
        from blindmcq.config.files import load_groups, load_label_schemes

        schemes = load_label_schemes()  # configuration enters here, once
        groups: dict[str, Any] = {}
        sample, seed = DEFAULT_SAMPLE, DEFAULT_SEED
        if args.params is not None:
            if not args.params.is_file():
                raise InputError("params file not found", file=str(args.params))
            params = yaml.safe_load(args.params.read_text(encoding="utf-8")) or {}
            for group in GROUPS:
                if not isinstance(params.get(group), dict):
                    raise ConfigError(group, "missing from the params file", file=str(args.params))
                groups[group] = params[group]
            probe = params.get("probe") or {}
            sample, seed = probe.get("sample", sample), int(probe.get("seed", seed))
        options = load_groups(GROUPS)
        for group in GROUPS:
            name = getattr(args, group)
            if name is not None or group not in groups:
                groups[group] = options.get(group, name or DEFAULTS[group])
        if args.sample is not None:
            sample = None if args.sample == "all" else args.sample
        seed = args.seed if args.seed is not None else seed
        config = ProbeConfig(label_schemes=schemes, **groups)
        mapping = Mapping(header=not args.no_header, question=args.question, options=list(args.options),
                          key=args.key, key_format=args.key_format)  # fmt: skip
        files = export(args.harness, args.bank, args.out, config=config, mapping=mapping,
                       sample=sample, seed=seed, task=args.task)  # fmt: skip
    except BlindMCQError as exc:
        print(f"blindmcq export: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"blindmcq export: error: file {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    for path in files:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
