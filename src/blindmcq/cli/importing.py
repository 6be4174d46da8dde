"""``blindmcq import lm-eval|inspect LOG``: a harness's answers to an exported probe -> predictions
(``harnesses.importing.import_predictions``; see its docstring)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from blindmcq.answers.predictions import write_predictions
from blindmcq.cli._fail import fail
from blindmcq.errors import BlindMCQError, InputError
from blindmcq.harnesses.documents import HARNESSES
from blindmcq.harnesses.importing import export_items, export_key_labels, import_predictions, read_manifest


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
                        help="the folder `blindmcq export` wrote, whose manifest.json every answer is "
                        "checked against (default: the task's, as the log names it)")  # fmt: skip
    parser.add_argument("--items", type=Path, metavar="FILE",
                        help="the corpus the answers must belong to, e.g. results/corpus/items.jsonl "
                        "(default: the export's items.jsonl when --export is given)")  # fmt: skip
    parser.add_argument(
        "--gate-k", type=int, help="for --audit: reject items solved blind in at least k orders"
    )
    return parser


def _export_dir(args: argparse.Namespace) -> Path:
    """The folder the log's task was exported to: ``--export``, else the one the log names."""
    if args.export is not None:
        return Path(args.export)
    # lm-eval logs the task's config with the data file's absolute path; inspect logs the task file
    if args.harness == "inspect":
        try:
            from inspect_ai.log import read_eval_log

            log = read_eval_log(str(args.log), header_only=True)
        except Exception:  # not installed, or a damaged log: the reader itself says which below
            log = None
        task_file = getattr(getattr(log, "eval", None), "task_file", None)
        if isinstance(task_file, str) and task_file:
            return Path(task_file).resolve().parent
    else:
        for results in sorted(Path(args.log).parent.glob("results_*.json"), reverse=True):
            try:
                found = json.loads(results.read_text(encoding="utf-8"))
            except (ValueError, RecursionError):
                raise InputError("not valid JSON (or nested too deeply)", file=str(results)) from None
            configs = found.get("configs") if isinstance(found, dict) else None
            for config in (configs or {}).values() if isinstance(configs, dict) else ():
                kwargs = config.get("dataset_kwargs") if isinstance(config, dict) else None
                files = kwargs.get("data_files") if isinstance(kwargs, dict) else None
                data = files.get("test") if isinstance(files, dict) else None
                if isinstance(data, str) and data:
                    return Path(data).parent
    raise InputError("cannot tell which export this log answers: give --export DIR", file=str(args.log))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from blindmcq.config.files import load_label_schemes
        from blindmcq.labels import label_symbols_by_scheme

        symbols = label_symbols_by_scheme(load_label_schemes())  # configuration enters here, once
        if args.out.suffix not in (".parquet", ".jsonl"):
            raise InputError("--out must end in .parquet or .jsonl", file=str(args.out))
        if not Path(args.log).is_file():
            raise InputError("log file not found", file=str(args.log))
        export_dir = _export_dir(args)
        bank = read_manifest(export_dir)  # every answer is checked against the exported bank's keys
        predictions = import_predictions(args.harness, args.log, model=args.model, symbols=symbols, bank=bank)
        corpus = args.items or (Path(args.export) / "items.jsonl" if args.export is not None else None)
        if corpus is not None:  # answers to items outside the run's corpus would join its tables
            from blindmcq.analysis.frame import check_item_ids
            from blindmcq.datasets.items import read_items

            known = {item.id for item in read_items(corpus)}
            check_item_ids(predictions, known, source=str(args.log), corpus=str(corpus))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_predictions(predictions, args.out)
        written = [args.out]
        if args.audit is not None:
            from blindmcq.harnesses.audit_report import audit_imported

            items = export_items(export_dir)
            audit_imported(items, predictions, args.audit, source=str(args.log), gate_k=args.gate_k,
                           key_labels=export_key_labels(export_dir))  # fmt: skip
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
