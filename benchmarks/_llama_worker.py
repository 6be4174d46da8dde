"""llama.cpp's letter scores for ``bench_local_model.py``, run by a Python that imports ``llama_cpp``
(it may lack torch and blindmcq): ``python _llama_worker.py job.json`` prints one JSON line.

The job names the GGUF, the thread count and the calls: the prompt's token ids (those transformers
scores) and each label's one token. A call's scores are the labels' log-probabilities after the prompt.
The keys and values of the part a call shares with the one before are kept, as ``Llama.generate``
keeps them, so the orders of an item pay for their common head once.
"""

from __future__ import annotations

import json
import sys
import time

import llama_cpp
import numpy as np


def common_length(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def main() -> None:
    job = json.loads(open(sys.argv[1], encoding="utf-8").read())
    started = time.perf_counter()
    llm = llama_cpp.Llama(
        model_path=job["gguf"], n_ctx=2048, n_batch=512, n_threads=job["threads"],
        n_threads_batch=job["threads"], logits_all=False, verbose=False,
    )  # fmt: skip
    load_s = time.perf_counter() - started
    vocab = llm.n_vocab()
    scores = []
    started = time.perf_counter()
    for call in job["calls"]:
        ids = list(call["ids"])
        keep = min(common_length(llm.input_ids[: llm.n_tokens].tolist(), ids), len(ids) - 1)
        # drop the keys and values past the shared part (the method's name differs between versions)
        drop = getattr(llm._ctx, "memory_seq_rm", None) or llm._ctx.kv_cache_seq_rm
        drop(-1, keep, -1)
        llm.n_tokens = keep
        llm.eval(ids[keep:])
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(vocab,)).astype(np.float64)
        top = logits.max()
        logprobs = logits - top - np.log(np.exp(logits - top).sum())
        scores.append([float(logprobs[t]) for t in call["labels"]])
    seconds = time.perf_counter() - started
    out = {"version": llama_cpp.__version__, "threads": job["threads"], "load_s": load_s, "seconds": seconds}
    print(json.dumps({**out, "scores": scores}))


if __name__ == "__main__":
    main()
