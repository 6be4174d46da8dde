"""NonsenseQA diagnostic: Select-and-Letter against Matched-and-Dashed under skewed few-shot prompts.

``blindmcq nonsense``: the command line of ``tasks.nonsense.run_nonsense`` (its docstring says more). The
first line above is the command's ``--help`` description.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from blindmcq.cli._fail import fail
from blindmcq.config.files import load_groups, load_model_file
from blindmcq.config.schema import NonsenseSettings, Probe, default, model_config, typed
from blindmcq.errors import BlindMCQError, ConfigError
from blindmcq.tasks.nonsense import KEYS, NONSENSE_GROUPS, run_nonsense
from blindmcq.vocabulary import FEWSHOTS

log = logging.getLogger("blindmcq.tasks.nonsense")


# ---------------------------------------------------------------- command line


def _pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for part in text.split(","):
        protocol, _, skew = part.strip().partition(":")
        if not skew:
            raise ConfigError("--runs", f"expected protocol:skew, got {part!r}")
        pairs.append((protocol, skew))
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq nonsense",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,  # every option shows its default
    )
    d = NonsenseSettings()  # the defaults live in the schema
    parser.add_argument("--model", default="gemma3-270m", help="conf/model/NAME.yaml or a YAML path")
    parser.add_argument(
        "--n-test", type=int, default=d.n_test, help="generated test items (nonsense questions)"
    )
    parser.add_argument(
        "--skews", default=",".join(d.skews),
        help=f"few-shot skews to run, comma list of {', '.join(FEWSHOTS)} (all_a: every example's key A; "
        "a70: 70%% A; uniform: even; none: no examples)",
    )  # fmt: skip
    parser.add_argument(
        "--protocols",
        default=",".join(d.protocols),
        help="sl (Select-and-Letter), md (Matched-and-Dashed), comma list",
    )
    parser.add_argument(
        "--runs", type=_pairs, default=None,
        help="protocol:skew pairs, e.g. sl:all_a,md:all_a (default: every protocol x skew)%(default).0s",
    )  # fmt: skip
    parser.add_argument(
        "--orders", default=d.orders, help="'all' (the 2N rotations) or comma list of order ids"
    )
    parser.add_argument(
        "--keys", choices=KEYS, default=d.keys,
        help="skew: the test keys follow the examples' skew (the pattern pays); drawn: keys drawn uniformly",
    )  # fmt: skip
    parser.add_argument("--n-shots", type=int, default=d.n_shots, help="few-shot examples in each prompt")
    parser.add_argument("--phrasing", default=d.phrasing, help="the prompt, a conf/prompt/ name")
    parser.add_argument(
        "--md-max-tokens",
        type=int,
        default=d.md_max_tokens,
        help="output tokens a Matched-and-Dashed answer may use",
    )
    parser.add_argument(
        "--seed", type=int, default=d.seed, help="seed of the generated items, keys and examples"
    )
    parser.add_argument(
        "--out", default="results/nonsenseqa", help="output folder (predictions, tables, figure)"
    )
    parser.add_argument(
        "--cache", default=default(Probe, "cache"), help="the response cache (no call paid twice)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        model_cfg, configs = (
            model_config(load_model_file(args.model)),
            load_groups(NONSENSE_GROUPS),
        )  # configuration enters here
        settings = typed(NonsenseSettings, {
            "n_test": args.n_test, "skews": args.skews.split(","), "protocols": args.protocols.split(","),
            "runs": args.runs, "orders": "all" if args.orders == "all" else args.orders.split(","),
            "keys": args.keys, "seed": args.seed, "n_shots": args.n_shots, "phrasing": args.phrasing,
            "md_max_tokens": args.md_max_tokens,
        })  # fmt: skip
        predictions = run_nonsense(
            model_cfg, settings, configs=configs, cache_path=args.cache, out_dir=args.out
        )
    except BlindMCQError as exc:
        return fail("nonsense", exc)
    print(Path(args.out, "nonsenseqa.md").read_text(encoding="utf-8"))
    log.info("%d calls; outputs in %s", len(predictions), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
