"""``blindmcq export lm-eval|inspect BANK --out DIR``: the blind probe of a bank as a harness task
(``harnesses.export.export``; see its docstring)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindmcq.cli._fail import fail
from blindmcq.errors import BlindMCQError, ConfigError, InputError
from blindmcq.harnesses.documents import HARNESSES, ProbeConfig
from blindmcq.harnesses.export import GROUPS, export
from blindmcq.vocabulary import KEY_FORMATS


def parse_sample(text: str) -> int | str:
    """``--sample``: a number of items, or ``all`` (every usable item)."""
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of items or 'all', got {text!r}") from None


def _defaults() -> tuple[dict[str, str], Any]:
    """conf/config.yaml's choice for each group, and the probe group it chooses (its sample and seed)."""
    from blindmcq.config.files import default_choices, load_groups

    choices = default_choices()
    return choices, load_groups(("probe",)).option("probe", choices["probe"])


def build_parser() -> argparse.ArgumentParser:
    choices, probe = _defaults()
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
            f"--{group}", metavar="NAME", help=f"the {group} config NAME (default {choices[group]})"
        )
    parser.add_argument("--dataset", metavar="NAME",
                        help="the dataset config NAME whose description names the bank in the prompt "
                        "(default: the params file's dataset, else neutral words)")  # fmt: skip
    sample_help = f"items probed, seeded ('all': every usable one; default {probe.sample or 'all'})"
    parser.add_argument("--sample", type=parse_sample, metavar="N", help=sample_help)
    parser.add_argument("--seed", type=int, help=f"seed of the sample (default {probe.seed})")
    parser.add_argument("--task", metavar="NAME", help="the task's name in the harness")
    mapping = parser.add_argument_group("bank columns (as blindmcq audit; not for a corpus items.jsonl)")
    mapping.add_argument("--no-header", action="store_true", help="a CSV without a header row (MMLU)")
    mapping.add_argument("--question", metavar="COL")
    mapping.add_argument("--options", nargs="+", default=[], metavar="COL")
    mapping.add_argument("--key", metavar="COL")
    mapping.add_argument("--key-format", choices=list(KEY_FORMATS),
                         help="a letter, a 0-based or 1-based number, or the key option's text")  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import yaml

        from blindmcq.auditing.audit import Mapping
        from blindmcq.config.files import load_groups, load_label_schemes
        from blindmcq.config.schema import validate_group
        from blindmcq.tasks.presentations import for_bank

        schemes = load_label_schemes()  # configuration enters here, once
        groups: dict[str, Any] = {}
        choices, probe_default = _defaults()
        sample, seed = probe_default.sample, probe_default.seed
        dataset: Any = None
        if args.params is not None:
            if not args.params.is_file():
                raise InputError("params file not found", file=str(args.params))
            params = yaml.safe_load(args.params.read_text(encoding="utf-8")) or {}
            for group in GROUPS:
                if not isinstance(params.get(group), dict):
                    raise ConfigError(group, "missing from the params file", file=str(args.params))
                groups[group] = validate_group(group, params[group], file=str(args.params), key=group)
            dataset = params.get("dataset")
            probe = params.get("probe") or {}
            sample, seed = probe.get("sample", sample), int(probe.get("seed", seed))
        options = load_groups(GROUPS)
        for group in GROUPS:
            name = getattr(args, group)
            if name is not None or group not in groups:
                groups[group] = options.option(group, name or choices[group])
        if args.dataset is not None:
            dataset = load_groups(("dataset",)).option("dataset", args.dataset)
        elif dataset is not None:
            dataset = validate_group("dataset", dataset, file=str(args.params), key="dataset")
        description = dataset.description if dataset is not None else None
        groups["prompt"] = for_bank(groups["prompt"], description)  # the bank named as its config says
        if args.sample is not None:
            sample = None if args.sample == "all" else args.sample
        seed = args.seed if args.seed is not None else seed
        config = ProbeConfig(label_schemes=schemes, **groups)
        mapping = Mapping(header=not args.no_header, question=args.question, options=list(args.options),
                          key=args.key, key_format=args.key_format)  # fmt: skip
        files = export(args.harness, args.bank, args.out, config=config, mapping=mapping,
                       sample=sample, seed=seed, task=args.task)  # fmt: skip
    except (BlindMCQError, OSError) as exc:  # one line, exit 2
        return fail("export", exc, args.out)
    for path in files:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
