"""Shared wrapper: a stage fails on bad input with one clear line, not a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from blindmcq.errors import BlindMCQError
from blindmcq.params import load_params
from blindmcq.secrets import scrub_text


def run_stage(name: str, body: Callable[[dict[str, Any]], None]) -> None:
    """Run a stage's ``body`` on the checked ``params.yaml`` (params.load_params); exit 2 on bad input."""
    logging.basicConfig(level=logging.INFO, format=f"[{name}] %(message)s")
    try:
        body(load_params())
    except BlindMCQError as exc:  # one line; a credential it might quote is masked
        print(f"blindmcq {name}: error: {scrub_text(str(exc), assignments=False)}", file=sys.stderr)
        raise SystemExit(2) from None
