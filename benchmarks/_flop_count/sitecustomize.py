"""Counts the floating-point operations of a process's torch linear layers and attention (for
``bench_make_run.py --count-flops``): on ``PYTHONPATH`` Python imports it at start-up. Once the process
has imported ``torch.nn.functional`` (never before: a stage without a model pays nothing), ``linear``
and ``scaled_dot_product_attention`` are wrapped to add up 2 x rows x in x out per linear (the 262k-wide
output projection, whose weights are the embeddings, apart) and 4 x batch x heads x queries x keys x
head size per attention (an upper bound: a causal mask skips about half). At exit one JSON line per
process is appended to ``$BLINDMCQ_FLOP_LOG``. The arithmetic is unchanged: every call goes through to
torch with the same arguments."""

from __future__ import annotations

import atexit
import builtins
import json
import os
import sys
from typing import Any

HEAD_ROWS = 100_000  # an output projection: a vocabulary's rows (Gemma 3: 262,144), no decoder layer near it
_count = {"linear": 0.0, "head": 0.0, "attention": 0.0}


def _install(functional: Any) -> None:  # torch.nn.functional, imported by the process itself
    linear, sdpa = functional.linear, functional.scaled_dot_product_attention

    # torch's own parameter names, so a call by keyword reaches torch as it would unwrapped
    def counted_linear(input: Any, weight: Any, bias: Any = None) -> Any:
        flops = 2.0 * (input.numel() // input.shape[-1]) * weight.shape[0] * weight.shape[1]
        _count["head" if weight.shape[0] > HEAD_ROWS else "linear"] += flops
        return linear(input, weight, bias)

    def counted_sdpa(query: Any, key: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        q, k = query, key
        _count["attention"] += 4.0 * q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] * q.shape[3]
        return sdpa(query, key, value, *args, **kwargs)

    functional.linear = counted_linear  # nn.Linear.forward looks it up on the module at each call
    functional.scaled_dot_product_attention = counted_sdpa


_real_import = builtins.__import__


def _watching_import(name: str, *args: Any, **kwargs: Any) -> Any:
    module = _real_import(name, *args, **kwargs)
    functional = sys.modules.get("torch.nn.functional")
    done = functional is not None and not getattr(functional.__spec__, "_initializing", False)
    if done and hasattr(functional, "linear") and hasattr(functional, "scaled_dot_product_attention"):
        # once: the imports nested in this one return through here too
        if builtins.__import__ is _watching_import:
            builtins.__import__ = _real_import
            _install(functional)
    return module


def _dump() -> None:
    log = os.environ.get("BLINDMCQ_FLOP_LOG")
    if log and any(_count.values()):
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"argv": sys.argv, **_count}) + "\n")


builtins.__import__ = _watching_import
atexit.register(_dump)
