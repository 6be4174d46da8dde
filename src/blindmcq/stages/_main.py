"""Shared wrapper: a stage fails on bad input with one clear line, not a traceback."""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Callable
from typing import Any

from blindmcq.config.schema import Config
from blindmcq.errors import BlindMCQError, os_error_line
from blindmcq.params import load_params
from blindmcq.secrets import scrub_text


def run_stage(name: str, body: Callable[[Config], None]) -> None:
    """Run a stage's ``body`` on the typed ``params.yaml`` (params.load_params); exit 2 on bad input
    and on a file that cannot be written (a full or read-only disk), with one line naming it."""
    logging.basicConfig(level=logging.INFO, format=f"[{name}] %(message)s")
    log = logging.getLogger(f"blindmcq.stages.{name}")

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        # one log line that says what happened (the warning's own text), not a file path and source line
        log.warning("warning: %s", scrub_text(str(message), assignments=False))

    warnings.showwarning = show
    try:
        body(load_params())
    except BlindMCQError as exc:  # one line; a credential it might quote is masked
        print(f"blindmcq {name}: error: {scrub_text(str(exc), assignments=False)}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:  # a full or read-only disk: one line naming the path, not a traceback
        if exc.filename is None:
            raise
        print(f"blindmcq {name}: error: {scrub_text(os_error_line(exc), assignments=False)}", file=sys.stderr)
        raise SystemExit(2) from None
