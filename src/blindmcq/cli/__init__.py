"""``blindmcq`` command line: one subcommand per job, each a thin wrapper over the core.

blindmcq extract PDF... --out DIR     extract the Commission's PDF tables (two paths, verified)
blindmcq plan [--paper]               capacity plan: calls, tokens, cost, wall time (no model call)
blindmcq release [--name TAG]         push corpus, index, predictions and report to the DVC remote
blindmcq report --from DIR [--out D]  every table, figure and the HTML report of a release folder its commit
                                      pins (in the clone, -C), no model
blindmcq pull [URL]                   dvc pull from a release's read-only URL; a changed object, or a path
                                      outside the clone, is refused before anything is written
blindmcq html [--out DIR]             the browsable HTML report of the current run
blindmcq nonsense ...                 NonsenseQA: SL against MD under skewed few-shot prompts
blindmcq batch submit|status|collect  Bedrock batch inference through the response cache
blindmcq audit FILE --out DIR         audit any bank (CSV/TSV, JSONL, Parquet, XLSX, save_to_disk folder)
blindmcq preview [OVERRIDES] --items N  each probe call's exact wire request and cache key (no call)
blindmcq cache check [--repair] [FILE]  check the response cache's rows; drop bad ones, rebuild a damaged file
blindmcq export lm-eval|inspect BANK --out DIR  the blind probe as an lm-evaluation-harness / inspect_ai task
blindmcq import lm-eval|inspect LOG   a harness's answers to an exported probe -> predictions
blindmcq data fill [--shared DIR]     fill data/, the full inputs, every file sha256-checked (make data)

Every command line lives in this package, one module a command (``python -m blindmcq.cli.<module>``
runs one alone): argparse, the configuration read once, one call into the core, exit 2 with one line
on bad input.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

COMMANDS = {
    "extract": ("blindmcq.cli.extract", "extract the Commission's PDF question bank"),
    "plan": ("blindmcq.cli.plan", "dry-run capacity plan (calls, tokens, cost, wall time)"),
    "release": ("blindmcq.cli.release", "push versioned outputs to the DVC remote and tag the commit"),
    "report": ("blindmcq.cli.report", "the report from a release folder, no model (--from DIR)"),
    "pull": ("blindmcq.cli.pull", "pull a release over HTTPS (DVC remote 'release'), checked"),
    "html": ("blindmcq.cli.html", "write the static HTML report with the item explorer"),
    "nonsense": ("blindmcq.cli.nonsense", "NonsenseQA diagnostic: SL vs MD"),
    # batch: Bedrock batch inference from the command line (helper `reach`)
    "batch": ("blindmcq.cli.batch", "Bedrock batch inference: submit, status, collect into the cache"),
    "audit": (
        "blindmcq.cli.audit",
        "audit any bank: surface leaks, blind probe and gate, in one command",
    ),
    "preview": ("blindmcq.cli.preview", "print each probe call's wire request and cache key (no call)"),
    "cache": ("blindmcq.cli.cache", "check the response cache (cache check [--repair] [FILE])"),
    # the harnesses: lm-evaluation-harness and inspect_ai run the probe (docs/harnesses.md)
    "export": ("blindmcq.cli.export", "write the blind probe as an lm-eval or inspect_ai task"),
    "import": ("blindmcq.cli.importing", "lm-eval samples or an inspect_ai log -> predictions"),
    "data": ("blindmcq.cli.data", "fill data/, the full inputs, each file checked (make data)"),
}


def version() -> str:
    """The installed distribution's version (what pip reports), else the package's own."""
    from importlib import metadata

    try:
        return metadata.version("blindmcq")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        from blindmcq import __version__

        return __version__


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items()]
    return (
        "usage: blindmcq [--version] COMMAND [ARGS...]\n\n"
        "Measure whether a multiple-choice benchmark can be answered without its question.\n\n"
        "commands:\n" + "\n".join(lines) + "\n\n"
        "Run 'blindmcq COMMAND --help' for a command's options. The pipeline itself runs with\n"
        "'dvc repro' (see README.md)."
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if args[0] == "--version":
        print(f"blindmcq {version()}")
        return 0
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"blindmcq: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    return int(module.main(rest) or 0)
