"""``blindmcq plan --paper`` / ``--config plan.yaml``: a dry-run capacity plan, no model called
(``tasks.capacity.build_plan``; see its docstring)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from blindmcq.cli._fail import fail
from blindmcq.config.files import load_groups
from blindmcq.config.schema import PlanConfig, typed
from blindmcq.errors import BlindMCQError, InputError
from blindmcq.tasks.capacity import PLAN_GROUPS, build_plan, format_plan, measure_throughput, paper_config


def _read_config(path: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read the plan config ({exc})", file=path) from exc
    if not isinstance(data, dict):
        raise InputError("the plan config is not a mapping", file=path)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    """``blindmcq plan --paper`` or ``blindmcq plan --config plan.yaml`` [--rpm --tpm --latency --json]."""
    parser = argparse.ArgumentParser(
        prog="blindmcq plan", description="Dry-run capacity plan: no model is called."
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--paper", action="store_true", help="the paper's full-scale design (~1.2M calls)")
    source.add_argument("--config", help="a plan config (YAML or JSON)")
    parser.add_argument("--items-file", help="count the items of this items.jsonl instead of the config's")
    parser.add_argument("--rpm", type=float, help="requests per minute per region (all models)")
    parser.add_argument("--tpm", type=float, help="tokens per minute per region (all models)")
    parser.add_argument("--latency", type=float, help="mean seconds per call")
    parser.add_argument("--chars-per-token", type=float)
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.add_argument(
        "--throughput", type=float, help="calls per second a local/OpenAI-compatible server sustains"
    )
    parser.add_argument("--measure", metavar="MODEL", help="measure --throughput with a short run of MODEL")
    parser.add_argument("--measure-calls", type=int, default=20, help="calls in the measuring run (20)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        configs = load_groups(PLAN_GROUPS)  # configuration enters here, once
        # the plan file as read, the command's options on top; build_plan checks it once (PlanConfig)
        cfg = paper_config() if args.paper else _read_config(args.config)
        if args.items_file:
            cfg["items_file"] = args.items_file
        quota = dict(cfg.get("quota") or {})
        for key, value in (("rpm", args.rpm), ("tpm", args.tpm), ("latency_s", args.latency)):
            if value is not None:
                quota[key] = value
        cfg["quota"] = quota
        if args.chars_per_token is not None:
            cfg["chars_per_token"] = args.chars_per_token
        if args.measure:
            args.throughput = measure_throughput(args.measure, args.measure_calls, configs=configs)
            print(f"measured {args.throughput:.2f} calls/s with {args.measure} ({args.measure_calls} calls)")
        if args.throughput is not None:
            cfg["throughput"] = args.throughput
        checked = typed(PlanConfig, cfg, file=None if args.paper else args.config)  # enters here, typed
        plan = build_plan(checked, configs=configs)
    except BlindMCQError as exc:
        return fail(None, exc)
    if args.json:
        print(
            json.dumps(
                {
                    "runs": plan.runs,
                    "models": plan.models,
                    "totals": plan.totals,
                    "routes": plan.routes,
                    "unverified": plan.unverified,
                },
                indent=2,
            )
        )
    else:
        print(format_plan(plan))
        print(f"(planned in {time.perf_counter() - started:.1f} s; no model was called)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
