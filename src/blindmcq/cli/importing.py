"""``blindmcq import lm-eval|inspect LOG``: a harness's answers to an exported probe -> predictions
(``harnesses.importing.import_predictions``; see its docstring)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from blindmcq.answers.predictions import write_predictions
from blindmcq.cli._fail import fail
from blindmcq.errors import BlindMCQError, InputError
from blindmcq.harnesses.documents import HARNESSES
from blindmcq.harnesses.importing import export_items, import_predictions


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blindmcq import",
        description="Turn lm-evaluation-harness samples or an inspect_ai log of an exported probe into "
        "blindmcq predictions (docs/harnesses.md).",
    )
    parser.add_argument("harness", choices=HARNESSES)
    parser.add_argument("log", type=Path, metavar="LOG",
                        help="lm-eval: samples_<task>_<time>.jsonl; inspect: the .eval log")  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path("predictions.parquet"), metavar="FILE",
                        help="predictions file, .parquet or .jsonl (default: %(default)s)")  # fmt: skip
    parser.add_argument("--model", metavar="NAME",
                        help="the model column (default: the name the harness logged)")  # fmt: skip
    parser.add_argument("--audit", type=Path, metavar="DIR", help="also write the audit report into DIR")
    parser.add_argument("--export", type=Path, metavar="DIR",
                        help="the folder `blindmcq export` wrote (default: the task's)")  # fmt: skip
    parser.add_argument("--items", type=Path, metavar="FILE",
                        help="the corpus the answers must belong to, e.g. results/corpus/items.jsonl "
                        "(default: the export's items.jsonl when --export is given)")  # fmt: skip
    parser.add_argument(
        "--gate-k", type=int, help="for --audit: reject items solved blind in at least k orders"
    )
    return parser


def _export_dir(args: argparse.Namespace, predictions: pd.DataFrame) -> Path:
    if args.export is not None:
        return Path(args.export)
    # lm-eval logs the task's config with the data file's absolute path; inspect logs the task file
    if args.harness == "inspect":
        from inspect_ai.log import read_eval_log

        log = read_eval_log(str(args.log), header_only=True)
        task_file = getattr(log.eval, "task_file", None)
        if task_file:
            return Path(task_file).resolve().parent
    else:
        for results in sorted(Path(args.log).parent.glob("results_*.json"), reverse=True):
            configs = json.loads(results.read_text(encoding="utf-8")).get("configs") or {}
            for config in configs.values():
                data = ((config.get("dataset_kwargs") or {}).get("data_files") or {}).get("test")
                if data:
                    return Path(data).parent
    raise InputError("cannot tell which export this log answers: give --export DIR", file=str(args.log))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from blindmcq.config.files import load_label_schemes
        from blindmcq.tasks.presentations import label_symbols_by_scheme

        symbols = label_symbols_by_scheme(load_label_schemes())  # configuration enters here, once
        if args.out.suffix not in (".parquet", ".jsonl"):
            raise InputError("--out must end in .parquet or .jsonl", file=str(args.out))
        predictions = import_predictions(args.harness, args.log, model=args.model, symbols=symbols)
        corpus = args.items or (Path(args.export) / "items.jsonl" if args.export is not None else None)
        if corpus is not None:  # answers to items outside the run's corpus would join its tables
            from blindmcq.answers.predictions import check_item_ids
            from blindmcq.datasets.items import read_items

            known = {item.id for item in read_items(corpus)}
            check_item_ids(predictions, known, source=str(args.log), corpus=str(corpus))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_predictions(predictions, args.out)
        written = [args.out]
        if args.audit is not None:
            from blindmcq.harnesses.audit_report import audit_imported

            items = export_items(_export_dir(args, predictions))
            audit_imported(items, predictions, args.audit, source=str(args.log), gate_k=args.gate_k)
            written += [args.audit / name for name in ("report.md", "index.html", "metrics.json")]
    except (BlindMCQError, OSError) as exc:  # one line, exit 2
        return fail("import", exc, args.log)
    counts = predictions["parse_status"].value_counts().to_dict()
    print(f"{len(predictions)} calls of {predictions['model'].iloc[0]} ({counts})", file=sys.stderr)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
