"""Shared wrapper: a stage fails on bad input with one clear line, not a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from blindmcq.errors import BlindMCQError
from blindmcq.params import load_params


def run_stage(name: str, body: Callable[[dict[str, Any]], None]) -> None:
    logging.basicConfig(level=logging.INFO, format=f"[{name}] %(message)s")
    try:
        body(load_params())
    except BlindMCQError as exc:
        print(f"blindmcq {name}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
