"""Local-model speed on this machine, against the machine's own fp32 matmul rate in the same process.

    python benchmarks/bench_local_model.py --threads 2 --items 6            # batched vs one at a time
    python benchmarks/bench_local_model.py --threads 2 --attn eager         # another attention kernel
    python benchmarks/bench_local_model.py --threads 2 --first-load         # also time a fresh conversion

Each item is asked in its 8 orders (4 rotations, 4 reversed rotations), as the probe asks it: the
prompt's head (the blind instruction, or the question) is the same in every order and is marked as the
shared prefix (``shared_prefix_chars``), so its keys and values are computed once. Prompts are built
here in the paper's "original" framing so that the benchmark does not depend on the presentation module;
their length is what matters for speed, and it is printed. Items: the real customs bank when ``make
data`` (or ../shared/data) has it, else the committed sample (tests/fixtures/corpus/customs_sample.json).

Two paths over the same requests: ``complete`` one call at a time, and ``complete_many`` with one batch
per ``--batch-items`` items (the engine's ``batch_size``). Achieved GFLOP/s = tokens the model really
computes (each prefix once, the rest of every prompt; padding not counted) x 2 x non-embedding
parameters / seconds (the output projection is left out: the backend computes logits only where it
reads them). The peer is plain fp32 matmuls over the model's own linear shapes on the row count the path
feeds its layers (the median batch's rows x padded width, or the median prompt rest one at a time),
timed in this process right after: a ratio near 1 means the path runs at the hardware's fp32 rate.
"per CPU-s" is the same ratio over this process's CPU seconds (both sides): steadier when other jobs
share the cores, where the wall-clock ratio swings with the load between the path's timing and the peer's.
The batched scores are compared with the one-at-a-time ones on the grid (how many differ, by how much).
Threads wait passively (``OMP_WAIT_POLICY=PASSIVE``, set here before torch loads, as ``make run`` sets it).

The ratio counts the decoder's linear layers only, so the rest of a pass is what keeps it under 1: the
line "one batched pass ... by time" splits one ``complete_many`` of an item's orders (torch.profiler's
self time per op) into decoder linear layers, output projection (262k x 640, applied to the rows where a
score is read: a few rows read all 671 MB of it, and MKL's small-row product is slow), attention,
elementwise ops (RMS norms, GELU, rotary embedding, residuals), copies, other ops and the time outside any
op (Python, tokenising, mask building, the profiler itself). Measured at load 4-7 (2 cores): decoder
linear 62-69%, output projection 11-14%, elementwise 7-11%, attention 3-5%, outside ops 5-9% (mostly the
profiler's own: wire requests and tokenising take 7 ms of a 1.7 CPU-s pass), copies under 1%; the
decoder's products themselves run at the peer's rate (the model's ``x @ W.T`` layout and the peer's
``x @ W`` within 5% per CPU-s at 62-748 rows). Without changing the floats (every score is committed on a 1e-4
grid) the output projection's and attention's products cannot be re-cut (other row counts or layouts give
other bits), so about 0.75 is this path's ceiling.

Cloze (``--no-cloze`` skips it): the same items' 8 cloze requests per condition as the probe batches them
(13 a ``complete_many``), the default padded batches against ``cloze_shared_context`` (each context's keys
and values once a pass), with GFLOP/s counting the output projection where an option token is read, the
peer at the median pass's rows, and the grid points the shared path moves (``choice_logprobs``, the
configured norm).

Optional: llama.cpp (a binding importable, ``llama_cpp_py_sync`` or ``llama_cpp`` from llama-cpp-python,
e.g. in a separate venv given as ``--llama-python``) runs the GGUF the package ships on the same
letter-probe prompts (the same token ids): calls/s, and agreement of picks and scores with transformers'
fp32 timed on the same calls (``--llama-only``: that alone). It skips with a line when neither binding
imports.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

# as ``make run`` runs the model (the Makefile sets it): OpenMP reads it when torch loads, so setting it
# after ``import torch`` (as the backend module does) would leave this benchmark's threads spinning
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch
import yaml
from _report import full_input, result  # run as a script: benchmarks/ is on sys.path

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.local import CLOZE_MEMO, KV_MEMO_SIZE, LocalBackend, first_best
from blindmcq.config.schema import model_config
from blindmcq.vocabulary import CONDITIONS

ROOT = Path(__file__).resolve().parents[1]

BANK = full_input("ua-customs-exam/questions.json") or ROOT / "tests/fixtures/corpus/customs_sample.json"
LABELS = ("А", "Б", "В", "Г")
SYSTEM = "Ви складаєте іспит для вступу на державну службу в митних органах України."
CUE = "Відповідь:"
WORKER = Path(__file__).with_name("_llama_worker.py")


def customs_items(path: Path, n: int, seed: int) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    items = [it for act in data["legislation"].values() for it in act]
    for comp in data.get("operational_competencies", {}).values():
        for level in comp["levels"].values():
            items.extend(level)
    items = [it for it in items if len(it["answers"]) == len(LABELS)]
    return random.Random(seed).sample(items, n)


def orders(n: int) -> list[list[int]]:
    """The probe's 2n orders: rotations and reversed rotations."""
    rot = [[(k + i) % n for i in range(n)] for k in range(n)]
    return rot + [list(reversed(o)) for o in rot]


def item_requests(model: str, item: dict, condition: str) -> list[ModelRequest]:
    """An item's 8 scoring requests; the head before the options is the same in every order."""
    if condition == "blind":
        head = "Питання приховано. Оберіть правильний варіант лише за текстом варіантів.\n"
    else:
        head = f"{item['question']}\n"
    out = []
    for order in orders(len(item["answers"])):
        options = "\n".join(
            f"{lab}. {item['answers'][i]['text']}" for lab, i in zip(LABELS, order, strict=True)
        )
        out.append(
            ModelRequest(
                model=model,
                system=SYSTEM,
                user=f"{head}{options}\n{CUE}",
                choices=LABELS,
                extra={"shared_prefix_chars": len(head)},
            )
        )
    return out


def work(
    backend: LocalBackend, batches: Sequence[Sequence[ModelRequest]], batched: bool
) -> tuple[int, list[int]]:
    """(tokens the model computes on this path, the row count of each forward pass): each prefix once
    while the backend's key/value memo (``KV_MEMO_SIZE``, least recently used out) holds it, then
    every prompt's rest; batched, a pass is one batch's rows of one prefix, padded to the widest."""
    memo: list[tuple[int, ...]] = []
    tokens, rows = 0, []
    for batch in batches:
        groups: dict[tuple[int, ...], list[int]] = {}
        for request in batch:
            ctx, conts, prefix = backend._letter_inputs(request, backend.wire_request(request))
            key = tuple(prefix)
            if key in memo:
                memo.remove(key)
            else:
                tokens += len(prefix)
            memo = [*memo, key][-KV_MEMO_SIZE:]
            rest = len(ctx) - len(prefix) + len(conts[0]) - 1
            tokens += rest
            groups.setdefault(key, []).append(rest)
        for rests in groups.values():
            rows += [len(rests) * max(rests)] if batched else rests
    return tokens, rows


def timed(
    backend: LocalBackend, batches: Sequence[Sequence[ModelRequest]], batched: bool
) -> tuple[float, float, list[ModelResponse]]:
    """(seconds, CPU seconds of this process, the responses) for every request of ``batches`` on one
    path, with an empty key/value memo."""
    backend._kv_memo.clear()
    started, cpu = time.perf_counter(), time.process_time()
    if batched:
        responses = [r for batch in batches for r in backend.complete_many(batch)]
    else:
        responses = [backend.complete(r) for batch in batches for r in batch]
    return time.perf_counter() - started, time.process_time() - cpu, responses


ATTENTION = ("scaled_dot_product", "softmax", "bmm", "baddbmm")
ELEMENTWISE = (
    "mul", "add", "sub", "div", "pow", "mean", "rsqrt", "gelu", "tanh", "neg", "sum", "where", "cat", "cos",
    "sin", "exp", "log", "max", "fill", "masked", "bitwise", "le", "ge", "lt", "gt", "eq", "arange", "clamp",
)  # fmt: skip


def breakdown(backend: LocalBackend, batch: Sequence[ModelRequest]) -> str:
    """Where one ``complete_many`` of ``batch`` (its prefix's keys and values already in the memo) spends
    its time, from torch.profiler's per-op self time: the decoder's linear layers, the output projection
    (the 262k-row head, applied where a score is read), attention, elementwise ops (norms, activation,
    rotary, residuals), copies (the prefix's keys and values per row, layouts), other ops, and the rest
    (Python, tokenising, mask building: outside any op)."""
    from torch.profiler import ProfilerActivity, profile

    head = backend.model.get_output_embeddings().weight.shape[0]
    backend.complete_many(batch)
    started = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        backend.complete_many(batch)
    total = time.perf_counter() - started
    parts: dict[str, float] = defaultdict(float)
    for event in prof.key_averages(group_by_input_shape=True):
        op = event.key.removeprefix("aten::")
        if op in ("mm", "addmm"):
            part = "output projection" if event.input_shapes[1][-1] == head else "decoder linear"
        elif any(a in op for a in ATTENTION):
            part = "attention"
        elif op.rstrip("_") in ELEMENTWISE or op.startswith(ELEMENTWISE):
            part = "elementwise"
        elif "copy" in op or op in ("clone", "repeat_interleave", "contiguous", "index", "index_select"):
            part = "copies"
        else:
            part = "other ops"
        parts[part] += event.self_cpu_time_total / 1e6
    parts["outside ops"] = max(total - sum(parts.values()), 0.0)
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name} {seconds / total:.0%}" for name, seconds in ranked)


def linear_shapes(model: torch.nn.Module) -> list[tuple[int, int]]:
    """(in, out) of every linear layer but the output projection: the non-embedding weights."""
    head = model.get_output_embeddings()
    return [
        (m.in_features, m.out_features)
        for m in model.modules()
        if isinstance(m, torch.nn.Linear) and m is not head
    ]


def matmul_gflops(shapes: list[tuple[int, int]], tokens: int, seconds: float = 3.0) -> tuple[float, float]:
    """(GFLOP/s, GFLOP per CPU second of this process) of plain fp32 ``x @ W`` over ``shapes`` on a
    ``tokens``-row input, for ``seconds``."""
    weights = [torch.randn(i, o) for i, o in shapes]
    inputs = {i: torch.randn(tokens, i) for i, _ in shapes}
    flops = sum(2 * tokens * i * o for i, o in shapes)
    with torch.inference_mode():
        for w in weights:  # warm-up
            inputs[w.shape[0]] @ w
        passes, started, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - started < seconds:
            for w in weights:
                inputs[w.shape[0]] @ w
            passes += 1
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return flops * passes / elapsed / 1e9, flops * passes / cpu / 1e9


def grid_agreement(a: Sequence[ModelResponse], b: Sequence[ModelResponse]) -> tuple[int, int, float, int]:
    """(scores, scores on another grid point, largest difference, calls with another pick)."""
    pairs = [
        (x, y)
        for r, s in zip(a, b, strict=True)
        for x, y in zip(r.choice_logprobs or [], s.choice_logprobs or [], strict=True)
    ]
    picks = sum(r.text != s.text for r, s in zip(a, b, strict=True))
    return len(pairs), sum(x != y for x, y in pairs), max(abs(x - y) for x, y in pairs), picks


def llama_agreement(name: str, ref: list[list[float]], ref_s: float, out: dict) -> str:
    """One line: calls/s of both runtimes, picks equal, score differences, grid points moved."""
    from blindmcq.backends.base import quantise_score

    scores = out["scores"]
    pairs = [(x, y) for r, s in zip(ref, scores, strict=True) for x, y in zip(r, s, strict=True)]
    diffs = [abs(x - y) for x, y in pairs]
    moved = sum(quantise_score(x) != quantise_score(y) for x, y in pairs)
    # the backend's own pick rule (highest score, the first of equal ones) on both runtimes' scores
    same = sum(first_best(s) == first_best(r) for s, r in zip(scores, ref, strict=True))
    n = len(scores)
    return (
        f"  {name}: transformers fp32 {n / ref_s:5.2f} calls/s, llama.cpp {n / out['seconds']:5.2f} calls/s "
        f"({ref_s / out['seconds']:.2f}x); picks equal in {same} of {n}; |score difference| median "
        f"{statistics.median(diffs):.4f}, max {max(diffs):.4f} nats; {moved} of {len(pairs)} scores on "
        f"another 1e-4 grid point"
    )


def llama_section(args: argparse.Namespace, backend: LocalBackend, items: list[dict]) -> None:
    """llama.cpp on the GGUF the package ships, fed the very token ids transformers scores, against
    transformers fp32 timed here on the same calls (letter probe one at a time, blind and full; cloze
    on the full condition's options)."""
    python = args.llama_python or sys.executable
    probe = subprocess.run([python, str(WORKER), "--probe"], capture_output=True, text=True)
    if probe.returncode != 0:
        why = probe.stdout.strip() or probe.stderr.strip()[-300:]
        print(f"llama.cpp: skipped (no binding loads in {python}: {why})")
        return
    parts: dict[str, list[dict]] = {}
    refs: dict[str, tuple[list[list[float]], float]] = {}
    for condition in CONDITIONS:
        requests = [r for it in items for r in item_requests(backend.cfg.name, it, condition)]
        calls = []
        for request in requests:
            ctx, conts, _ = backend._letter_inputs(request, backend.wire_request(request))
            calls.append({"ids": ctx, "conts": conts})
        backend._kv_memo.clear()
        started = time.perf_counter()
        ref = [backend.complete(r).choice_logprobs or [] for r in requests]
        refs[f"letter {condition}"] = (ref, time.perf_counter() - started)
        parts[f"letter {condition}"] = calls
    calls, ref = [], []
    started = time.perf_counter()
    for it in items:
        context = backend.cloze_context(it["question"], CUE)
        options = [a["text"] for a in it["answers"]]
        ref.append([s["logprob"] for s in backend.score_options(context, options)])
    refs["cloze full"] = (ref, time.perf_counter() - started)
    for it in items:
        context = backend.cloze_context(it["question"], CUE)
        pairs = [backend.encode_pair(context, backend.delimiter + a["text"]) for a in it["answers"]]
        calls.append({"ids": pairs[0][0], "conts": [c for _, c in pairs]})
    parts["cloze full"] = calls
    with tempfile.TemporaryDirectory() as tmp:
        gguf = backend.path if backend.path is not None else backend._assemble_package(Path(tmp))
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({"gguf": str(gguf), "threads": args.threads, "parts": parts}))
        done = subprocess.run([python, str(WORKER), str(job)], capture_output=True, text=True)
        if done.returncode != 0:
            # the exit status too: a crash in the library (a negative status, the signal) leaves only
            # llama.cpp's own log lines on stderr
            last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no stderr"
            print(f"llama.cpp: failed (worker exit status {done.returncode}; last stderr line: {last})")
            return
        out = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"llama.cpp {out['version']} ({out['threads']} threads, the GGUF as shipped, Q4_K_M; load "
        f"{out['load_s']:.1f} s) against transformers fp32 (the same GGUF dequantised), the same token ids; "
        f"letter calls one at a time, each reusing its shared prefix; cloze one item's options a call:"
    )
    for name, (ref_scores, ref_s) in refs.items():
        print(llama_agreement(name, ref_scores, ref_s, out[name]))


def cloze_requests(model: str, item: dict, condition: str) -> list[ModelRequest]:
    """An item's 8 cloze requests as the probe sends them: option texts in slot order, the question only
    in the full condition (the cloze context), the answer cue."""
    texts = [a["text"] for a in item["answers"]]
    extra = {"cloze_question": item["question"] if condition == "full" else None, "answer_cue": CUE}
    return [
        ModelRequest(
            model=model,
            system=SYSTEM,
            user=item["question"],
            choices=LABELS,
            extra={**extra, "option_texts": [texts[i] for i in order]},
        )
        for order in orders(len(texts))
    ]


def cloze_section(cfg: dict, items: list[dict], shapes: list[tuple[int, int]]) -> None:
    """Cloze scoring as the probe batches it (13 requests a ``complete_many``, ``cloze_batch_size``
    sequences a pass), the default padded batches against ``cloze_shared_context`` (each context's keys
    and values once a pass): calls/s, GFLOP/s on the tokens computed (the decoder's linear layers, and
    the output projection where a continuation token is read) against fp32 matmuls of the decoder's
    shapes, and the grid points the shared path moves."""
    params = sum(i * o for i, o in shapes)
    for condition in CONDITIONS:
        requests = [r for it in items for r in cloze_requests(cfg["name"], it, condition)]
        batches = [requests[k : k + 13] for k in range(0, len(requests), 13)]
        runs = {}
        for flag in (False, True):
            backend = LocalBackend(model_config({**cfg, "scoring": "cloze", "cloze_shared_context": flag}))
            backend.load()  # the weights already loaded in this process
            head = backend.model.get_output_embeddings().weight.shape
            CLOZE_MEMO.clear()
            backend._kv_memo.clear()
            started, cpu = time.perf_counter(), time.process_time()
            out = [r for batch in batches for r in backend.complete_many(batch)]
            runs[flag] = (time.perf_counter() - started, time.process_time() - cpu, out, backend)
        size = cfg.get("cloze_batch_size", 8)
        for flag, (seconds, cpu, _, backend) in runs.items():
            body = heads = 0
            rows = []
            for batch in batches:  # the distinct pairs of a batch, in chunks of ``size`` per context
                pairs = list(dict.fromkeys(
                    (backend.cloze_context(r.extra["cloze_question"], CUE), o)
                    for r in batch for o in r.extra["option_texts"]
                ))  # fmt: skip
                ids = [backend.encode_pair(c, backend.delimiter + o) for c, o in pairs]
                heads += sum(len(cont) for _, cont in ids)
                if flag:
                    by_ctx: dict[tuple[int, ...], list[int]] = {}
                    for ctx, cont in ids:
                        by_ctx.setdefault(tuple(ctx), []).append(len(cont) + 1)
                    for ctx, widths in by_ctx.items():
                        for k in range(0, len(widths), size):
                            chunk = widths[k : k + size]
                            body += len(ctx) - 1 + sum(chunk)
                            rows.append(len(chunk) * max(chunk))
                else:
                    for k in range(0, len(ids), size):
                        chunk = [len(c) + len(d) for c, d in ids[k : k + size]]
                        body += sum(chunk)
                        rows.append(len(chunk) * max(chunk))
            flop = body * 2 * params + heads * 2 * head[0] * head[1]
            gflops = flop / seconds / 1e9
            shape = int(statistics.median(rows))
            peer, peer_cpu = matmul_gflops(shapes, shape)
            name = "shared context" if flag else "padded batches"
            print(
                f"cloze {condition:5s} {name:14s}: {len(requests) / seconds:6.2f} calls/s, {body} tokens "
                f"computed, {heads} projected; {gflops:5.1f} GFLOP/s; fp32 matmul of the same shapes at "
                f"{shape} rows {peer:5.1f} GFLOP/s ({gflops / peer:.2f}x); per CPU-s {flop / cpu / 1e9:5.1f} "
                f"against {peer_cpu:5.1f} ({flop / cpu / 1e9 / peer_cpu:.2f}x)"
            )
        n, moved, biggest, picks = grid_agreement(runs[False][2], runs[True][2])
        print(
            f"  cloze {condition} shared context vs padded batches: {moved} of {n} scores on another grid "
            f"point (largest difference {biggest:.4f}), {picks} picks differ; speed-up "
            f"{runs[False][0] / runs[True][0]:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--batch-items", type=int, default=1, help="items (x 8 orders) per complete_many")
    parser.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bank", type=Path, default=BANK)
    parser.add_argument("--first-load", action="store_true", help="also time a conversion into a fresh cache")
    parser.add_argument("--generate-tokens", type=int, default=16)
    parser.add_argument("--llama-python", help="a Python that imports llama_cpp (default: this one)")
    parser.add_argument("--no-llama", action="store_true")
    parser.add_argument("--no-cloze", action="store_true", help="skip the cloze section")
    parser.add_argument("--llama-only", action="store_true", help="only the llama.cpp comparison")
    args = parser.parse_args()

    cfg = yaml.safe_load((ROOT / "conf" / "model" / "gemma3-270m.yaml").read_text(encoding="utf-8"))
    cfg["threads"] = args.threads
    torch.set_num_threads(args.threads)
    print(
        f"model {cfg['name']}, {args.threads} threads, {args.attn} attention, {args.items} items x 8 orders "
        f"(seed {args.seed}), {args.batch_items} item(s) per batch, of {args.bank}"
    )

    if args.first_load:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = LocalBackend(model_config({**cfg, "cache_dir": tmp}))
            fresh.load()
            print(f"first load (GGUF -> float32, saved to cache): {fresh.load_seconds:.1f} s")
            del fresh

    backend = LocalBackend(model_config(cfg))
    backend.load()
    backend.model.set_attn_implementation(args.attn)
    print(f"load from {backend.loaded_from}: {backend.load_seconds:.1f} s  ({backend.cache_dir})")

    items = customs_items(args.bank, args.items, args.seed)
    if args.llama_only:
        llama_section(args, backend, items)
        return
    shapes = linear_shapes(backend.model)
    params = sum(i * o for i, o in shapes)
    print(f"non-embedding parameters (linear layers): {params / 1e6:.1f} M")
    headline: tuple[float, float, int] | None = None
    for condition in CONDITIONS:
        per_item = [item_requests(cfg["name"], it, condition) for it in items]
        batches = [
            [r for group in per_item[k : k + args.batch_items] for r in group]
            for k in range(0, len(per_item), args.batch_items)
        ]
        requests = [r for batch in batches for r in batch]
        started = time.perf_counter()
        for request in requests:
            backend._letter_inputs(request, backend.wire_request(request))
        tokenise = (time.perf_counter() - started) / len(requests)
        backend.complete_many(batches[0])  # warm-up
        one_s, one_cpu, one = timed(backend, batches, batched=False)
        many_s, many_cpu, many = timed(backend, batches, batched=True)
        n, moved, biggest, picks = grid_agreement(one, many)
        prompt_tokens = statistics.mean(r.input_tokens or 0 for r in one)
        print(
            f"{condition:5s}: {len(requests)} calls, {prompt_tokens:.0f} prompt tokens each; "
            f"prompt building + tokenising {tokenise * 1000:.1f} ms a call"
        )
        for name, seconds, cpu, batched in (
            ("one at a time", one_s, one_cpu, False), ("batched", many_s, many_cpu, True)
        ):  # fmt: skip
            tokens, rows = work(backend, batches, batched)
            gflops, per_cpu = tokens * 2 * params / seconds / 1e9, tokens * 2 * params / cpu / 1e9
            shape = int(statistics.median(rows))
            peer, peer_cpu = matmul_gflops(shapes, shape)
            print(
                f"  {name:13s}: {len(requests) / seconds:6.2f} calls/s ({cpu / len(requests):.3f} CPU-s a "
                f"call), {tokens} tokens computed, {gflops:5.1f} GFLOP/s; fp32 matmul of the same shapes at "
                f"{shape} rows {peer:5.1f} GFLOP/s ({gflops / peer:.2f}x); per CPU-s {per_cpu:5.1f} against "
                f"{peer_cpu:5.1f} ({per_cpu / peer_cpu:.2f}x)"
            )
            if batched and condition == "blind":
                headline = (gflops, peer, shape, per_cpu / peer_cpu)
        print(
            f"  batched vs one at a time: {moved} of {n} scores on another grid point "
            f"(largest difference {biggest:.4f}), {picks} picks differ; speed-up {one_s / many_s:.2f}x"
        )
        print(f"  one batched pass (one item's orders), by time: {breakdown(backend, batches[0])}")

    gen = [
        ModelRequest(model=cfg["name"], system=SYSTEM, user=it["question"], max_tokens=args.generate_tokens)
        for it in items[: max(3, args.items // 5)]
    ]
    backend.complete(gen[0])
    started = time.perf_counter()
    for request in gen:
        backend.complete(request)
    rate = len(gen) / (time.perf_counter() - started)
    print(f"generate {args.generate_tokens} tokens: {rate:5.2f} calls/s")

    if not args.no_cloze:
        cloze_section(cfg, items, shapes)

    if not args.no_llama:
        llama_section(args, backend, items)

    assert headline is not None
    gflops, peer, shape, cpu_ratio = headline
    result(
        "local-model",
        f"blind scoring batched {gflops:.1f} GFLOP/s",
        f"fp32 matmul, same shapes ({shape} rows): {peer:.1f} GFLOP/s",
        gflops / peer,
        f"per CPU-s {cpu_ratio:.2f}x; load average {os.getloadavg()[0]:.1f}",
    )


if __name__ == "__main__":
    main()
