"""llama.cpp's scores for ``bench_local_model.py``, run by a Python that imports a llama.cpp binding
(``llama_cpp_py_sync``, or ``llama_cpp`` from llama-cpp-python; it may lack torch and blindmcq):
``python _llama_worker.py job.json`` prints one JSON line, ``--probe`` the binding it would use.

The job names the GGUF, the thread count and the calls: the context's token ids (those transformers
scores) and one list of continuation ids per option. A call's scores are the options' summed
log-probabilities (full-vocabulary log-softmax) after the context: when every continuation is one
token (letter labels) one pass gives them all, else each option is its own sequence (cloze). The keys
and values of the part a sequence shares with the one before are kept, so the orders of an item, and
the options of one context, pay for their common head once.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np


def binding(why: list[str] | None = None) -> Any:
    """The first llama.cpp binding that imports and loads its library: ``llama_cpp_py_sync``, else
    ``llama_cpp``; ``None`` when neither does. A wheel built against a newer C library than this
    machine's imports but fails to load its library: each failure's reason is appended to ``why``."""
    for name in ("llama_cpp_py_sync", "llama_cpp"):
        try:
            module = __import__(name)
            if name == "llama_cpp_py_sync":  # it loads libllama on first use, not at import
                module._cffi_bindings.get_lib()
            return module
        except (ImportError, OSError, RuntimeError) as exc:
            if why is not None:
                why.append(f"{name}: {str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__}")
    return None


class Binding:
    """The llama.cpp C API as one of its Python bindings exposes it: ``lib`` carries the C functions by
    their C names (both bindings keep them), ``ctx`` the context, ``row`` copies one logits row."""

    def __init__(self, gguf: str, threads: int, n_ctx: int, n_batch: int) -> None:
        module = binding()
        if module is None:
            raise SystemExit("no llama.cpp binding imports (llama_cpp_py_sync, llama_cpp)")
        if module.__name__ == "llama_cpp_py_sync":
            llm = module.Llama(gguf, n_ctx=n_ctx, n_batch=n_batch, n_threads=threads, n_threads_batch=threads)
            self.lib, self.ctx, self.vocab = llm._lib, llm._ctx, llm.n_vocab
            self.version = f"llama_cpp_py_sync {module.__version__} ({module.__llama_cpp_tag__})"
            ffi = llm._ffi
            self.row = lambda ptr: np.frombuffer(ffi.buffer(ptr, 4 * self.vocab), dtype=np.float32).copy()
        else:
            llama_cpp = module
            # swa_full: Gemma 3's sliding-window layers keep every position, so a sequence's head can
            # be kept and its tail cut (a window-sized cache cannot cut and would start over)
            llm = llama_cpp.Llama(
                gguf,
                n_ctx=n_ctx,
                n_batch=n_batch,
                n_ubatch=n_batch,
                n_threads=threads,
                n_threads_batch=threads,
                swa_full=True,
                verbose=False,
            )
            self.lib, self.ctx, self.vocab = llama_cpp, llm._ctx.ctx, llm.n_vocab()
            self.version = f"llama-cpp-python {llama_cpp.__version__}"
            self.row = lambda ptr: np.ctypeslib.as_array(ptr, shape=(self.vocab,)).copy()
        self.llm: Any = llm  # owns the model and the context


def common_length(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


class Runner:
    """One llama.cpp context on sequence 0; ``logprobs`` evaluates a sequence past what it shares with
    the one before and returns the log-softmax rows at the positions asked for."""

    def __init__(self, gguf: str, threads: int) -> None:
        self.api = Binding(gguf, threads, n_ctx=2048, n_batch=512)
        self.lib, self.ctx, self.vocab = self.api.lib, self.api.ctx, self.api.vocab
        self.past: list[int] = []

    def _forget_from(self, keep: int) -> int:
        mem = self.lib.llama_get_memory(self.ctx)
        if not self.lib.llama_memory_seq_rm(mem, 0, keep, -1):  # a cache that cannot cut: start over
            self.lib.llama_memory_clear(mem, True)
            keep = 0
        self.past = self.past[:keep]
        return keep

    def logprobs(self, seq: list[int], first: int) -> np.ndarray:
        """Log-probability rows predicting ``seq[first + 1 :]`` and the token after ``seq`` (rows for
        positions ``first`` .. ``len(seq) - 1``)."""
        keep = self._forget_from(min(common_length(self.past, seq), first))
        rows = []
        for start in range(keep, len(seq), 512):
            chunk = seq[start : start + 512]
            batch = self.lib.llama_batch_init(len(chunk), 0, 1)
            try:
                batch.n_tokens = len(chunk)
                for i, token in enumerate(chunk):
                    batch.token[i] = token
                    batch.pos[i] = start + i
                    batch.n_seq_id[i] = 1
                    batch.seq_id[i][0] = 0
                    batch.logits[i] = 1 if start + i >= first else 0
                if self.lib.llama_decode(self.ctx, batch) != 0:
                    raise RuntimeError("llama_decode failed")
                for i in range(len(chunk)):
                    if start + i >= first:
                        ptr = self.lib.llama_get_logits_ith(self.ctx, i)
                        rows.append(self.api.row(ptr).astype(np.float64))
            finally:
                self.lib.llama_batch_free(batch)
        self.past = list(seq)
        logits = np.stack(rows)
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    def score(self, ctx: list[int], conts: list[list[int]]) -> list[float]:
        if all(len(c) == 1 for c in conts):
            row = self.logprobs(ctx, len(ctx) - 1)[-1]
            return [float(row[c[0]]) for c in conts]
        out = []
        for cont in conts:
            lp = self.logprobs(ctx + cont[:-1], len(ctx) - 1)
            out.append(float(sum(lp[i, t] for i, t in enumerate(cont))))
        return out


def main() -> None:
    if sys.argv[1:] == ["--probe"]:  # which binding a job would use; exit 1 when none, saying why
        why: list[str] = []
        module = binding(why)
        print(module.__name__ if module is not None else "none; " + "; ".join(why))
        raise SystemExit(module is None)
    job = json.loads(open(sys.argv[1], encoding="utf-8").read())
    started = time.perf_counter()
    runner = Runner(job["gguf"], job["threads"])
    load_s = time.perf_counter() - started
    out: dict = {"version": runner.api.version, "threads": job["threads"], "load_s": load_s}
    for part, calls in job["parts"].items():
        runner._forget_from(0)
        started = time.perf_counter()
        scores = [runner.score(call["ids"], call["conts"]) for call in calls]
        out[part] = {"seconds": time.perf_counter() - started, "scores": scores}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
