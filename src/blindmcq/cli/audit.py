"""``blindmcq audit FILE --out DIR``: audit any bank (``auditing.audit.run_audit``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindmcq.auditing.audit import AUDIT_GROUPS, DEFAULT_MODEL, Mapping, run_audit
from blindmcq.cli._fail import fail
from blindmcq.config.schema import Config, default
from blindmcq.errors import BlindMCQError, ConfigError, one_line
from blindmcq.vocabulary import BANK_FORMATS, KEY_FORMATS, SCORINGS


def with_overrides(cfg: dict[str, Any], overrides: Sequence[str] = ()) -> dict[str, Any]:
    """A dataset config (``conf/dataset/NAME.yaml``, read by ``main``) with ``dataset.KEY=VALUE`` overrides
    (values read as YAML), as the pipeline's ``-S dataset=NAME -S dataset.KEY=VALUE`` composes it."""
    import yaml

    cfg = dict(cfg)
    for override in overrides:
        key, sep, value = override.partition("=")
        name = key.removeprefix("dataset.")
        if not sep or not key.startswith("dataset.") or not name or "." in name:
            raise ConfigError(
                "FILE", f"expected dataset.KEY=VALUE after dataset={cfg.get('name')}, got {override!r}"
            )
        try:
            cfg[name] = yaml.safe_load(value)
        except yaml.YAMLError as exc:  # dataset.path=[x, say: the value is not YAML
            why = one_line(str(getattr(exc, "problem", None) or exc))
            raise ConfigError(key, f"{value!r} is not a YAML value ({why}); quote it") from None
    return cfg


EPILOG = """\
examples:
  blindmcq audit international_law_test.csv --no-header --out audit/
      MMLU's layout: question, options A-D, answer letter, no header
  blindmcq audit bank.jsonl --question stem --options choices --key gold --key-format index --out audit/
  blindmcq audit bank.csv --options A B C D --key answer --key-format label --model gemma3-270m --out a/
  blindmcq audit MCQs_test_perturbation.xlsx --options 32_choices --key 32_choices_gold --out a/
  blindmcq audit dataset=lexam-32 dataset.path=/data/lexam/MCQs_test_perturbation.xlsx --out a/
  blindmcq audit mmlu_saved/ --surface-only --out a/      a folder written by datasets' save_to_disk

Columns not named are guessed (question/stem, options/choices or columns A, B, ..., key/answer/gold) and
the guess is printed in one line. The default model is the heuristic 'longest' (seconds, no download);
any name under conf/model/ works, and --model none (or --surface-only) runs the surface strategies alone.
Writes only under --out: report.md, index.html, metrics.json, and the files they are built from.
Exit code 2 with one line naming the file, row and column when the mapping or the input is wrong."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blindmcq audit",
        description="Audit a multiple-choice bank: what the options alone give away (surface strategies "
        "with 95% Wilson intervals, key-position shares, option lengths), and a blind probe and gate "
        "with the chosen model.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "file",
        nargs="+",
        metavar="FILE",
        help=f"the bank ({', '.join(BANK_FORMATS)}; hf = a save_to_disk folder), or dataset=NAME "
        "(conf/dataset/NAME.yaml) followed by any dataset.KEY=VALUE overrides",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the outputs")
    parser.add_argument(
        "--no-header", action="store_true", help="the first row is data; columns are numbered from 0"
    )
    parser.add_argument("--question", metavar="COL", help="the question column (default: guessed / 0)")
    parser.add_argument(
        "--options",
        nargs="+",
        default=[],
        metavar="COL",
        help="one column holding a list of options, or one column per option in slot order",
    )
    parser.add_argument("--key", metavar="COL", help="the answer column (default: guessed / the last column)")
    parser.add_argument(
        "--key-format",
        choices=list(KEY_FORMATS),
        help="a letter, a 0-based or 1-based number, or the key option's text "
        "(default: label without a header, else guessed from the first rows)",
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help="model config name, or none (default: %(default)s)"
    )
    parser.add_argument(
        "--surface-only", action="store_true", help="no model: surface strategies and the bank profile only"
    )
    parser.add_argument(
        "--labels", help="label scheme under conf/labels/ for the probe (default: latin; it goes on past Z)"
    )
    parser.add_argument(
        "--language",
        help="the bank's language, e.g. uk, de, en (default: the dataset config's, else the script)",
    )
    parser.add_argument("--prompt", help="prompt config name (default: by the bank's language)")
    parser.add_argument("--gate-k", type=int, help="reject items solved blind in at least k orders")
    parser.add_argument(
        "--scoring", choices=list(SCORINGS), help="for a local model: score letters or option texts"
    )
    parser.add_argument(
        "--sample", type=int, metavar="N", help="probe a seeded sample of N usable items (default: all)"
    )
    parser.add_argument(
        "--seed", type=int, default=default(Config, "seed"),
        help="seed of the sample and tie-breaks (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--keep-duplicates", action="store_true",
        help="keep rows repeating an earlier item (flagged); default: drop them, said in one line",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    mapping = Mapping(
        header=not args.no_header,
        question=args.question,
        options=list(args.options),
        key=args.key,
        key_format=args.key_format,
        duplicates="keep" if args.keep_duplicates else "drop",
    )
    first, *rest = args.file
    try:
        from blindmcq.config.files import load_groups, load_model_file, read_group
        from blindmcq.config.schema import model_config, validate_group

        dataset = None
        if first.startswith("dataset="):
            composed = with_overrides(read_group("dataset", first.removeprefix("dataset=")), rest)
            dataset = validate_group("dataset", composed)
            given = [f for f, v in (("--question", args.question), ("--options", args.options),
                                    ("--key", args.key), ("--key-format", args.key_format),
                                    ("--no-header", args.no_header)) if v]  # fmt: skip
            if given:
                raise ConfigError(given[0], "a dataset config maps the columns itself; set dataset.KEY=VALUE")
        elif rest:
            raise ConfigError("FILE", f"one bank file, got {len(args.file)}: {args.file}")
        surface_only = args.surface_only or args.model.lower() == "none"
        model = None if surface_only else model_config(load_model_file(args.model))  # enters here, typed
        configs = load_groups(AUDIT_GROUPS)
        if args.labels is not None:
            configs.option("labels", args.labels)  # an unknown scheme stops here, naming the ones there are
        result = run_audit(
            Path(first), args.out, mapping, model=model, configs=configs, prompt=args.prompt,
            gate_k=args.gate_k, scoring=args.scoring, sample=args.sample, seed=args.seed,
            labels=args.labels, dataset=dataset, language=args.language,
        )  # fmt: skip
    except (BlindMCQError, OSError) as exc:  # one line, exit 2
        return fail("audit", exc, args.out)
    for warning in result.warnings:
        print(f"blindmcq audit: warning: {warning}", file=sys.stderr)
    for name in ("report.md", "index.html", "metrics.json"):
        if (args.out / name).exists():
            print(args.out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
