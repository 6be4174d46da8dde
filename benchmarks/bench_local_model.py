"""Local-model speed on this machine, against the machine's own fp32 matmul rate in the same process.

    python benchmarks/bench_local_model.py --threads 2 --items 30          # cached load + calls/s
    python benchmarks/bench_local_model.py --threads 2 --first-load         # also time a fresh conversion

Prompts are built here in the paper's "original" framing (blind: options only; full: stem and
options) so that the benchmark does not depend on the presentation module; their length is what
matters for speed, and it is printed. Items: the real customs bank when ``make data`` (or ../shared/data)
has it, else the committed sample (tests/fixtures/corpus/customs_sample.json).

Achieved GFLOP/s = input tokens x 2 x non-embedding parameters / seconds (the output projection is left
out: the backend computes logits only where it reads them). The peer is the same model's linear layers
run as plain fp32 matmuls on a sequence of the median prompt length, timed in this process right after:
a ratio near 1 means the scoring path runs at the hardware's fp32 rate, and speed can only come from
doing less work. The backend reuses the key/value cache of a shared prompt head, so the ratio can exceed 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch
import yaml
from _report import full_input, result  # run as a script: benchmarks/ is on sys.path

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.local import LocalBackend

ROOT = Path(__file__).resolve().parents[1]

BANK = full_input("ua-customs-exam/questions.json") or ROOT / "tests/fixtures/corpus/customs_sample.json"
LABELS = ("А", "Б", "В", "Г")
SYSTEM = "Ви складаєте іспит для вступу на державну службу в митних органах України."


def customs_items(path: Path, n: int, seed: int) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    items = [it for act in data["legislation"].values() for it in act]
    for comp in data.get("operational_competencies", {}).values():
        for level in comp["levels"].values():
            items.extend(level)
    return random.Random(seed).sample(items, n)


def prompt(item: dict, condition: str) -> str:
    options = "\n".join(f"{lab}. {a['text']}" for lab, a in zip(LABELS, item["answers"], strict=False))
    if condition == "blind":
        return f"Питання приховано. Оберіть правильний варіант лише за текстом варіантів.\n{options}"
    return f"{item['question']}\n{options}"


def time_calls(backend: LocalBackend, requests: list[ModelRequest]) -> tuple[float, float, list[int]]:
    """(calls per second, median latency s, input tokens per call) over ``requests``, after one warm-up."""
    backend.complete(requests[0])
    started = time.perf_counter()
    responses = [backend.complete(r) for r in requests]
    elapsed = time.perf_counter() - started
    latencies = [r.latency_s or 0.0 for r in responses]
    return len(requests) / elapsed, statistics.median(latencies), [r.input_tokens or 0 for r in responses]


def linear_shapes(model: torch.nn.Module) -> list[tuple[int, int]]:
    """(in, out) of every linear layer but the output projection: the non-embedding weights."""
    head = model.get_output_embeddings()
    return [
        (m.in_features, m.out_features)
        for m in model.modules()
        if isinstance(m, torch.nn.Linear) and m is not head
    ]


def matmul_gflops(shapes: list[tuple[int, int]], tokens: int, seconds: float = 3.0) -> float:
    """GFLOP/s of plain fp32 ``x @ W`` over ``shapes`` on a ``tokens``-row input, for ``seconds``."""
    weights = [torch.randn(i, o) for i, o in shapes]
    inputs = {i: torch.randn(tokens, i) for i, _ in shapes}
    flops = sum(2 * tokens * i * o for i, o in shapes)
    with torch.inference_mode():
        for w in weights:  # warm-up
            inputs[w.shape[0]] @ w
        passes, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            for w in weights:
                inputs[w.shape[0]] @ w
            passes += 1
        elapsed = time.perf_counter() - started
    return flops * passes / elapsed / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bank", type=Path, default=BANK)
    parser.add_argument("--first-load", action="store_true", help="also time a conversion into a fresh cache")
    parser.add_argument("--generate-tokens", type=int, default=16)
    args = parser.parse_args()

    cfg = yaml.safe_load((ROOT / "conf" / "model" / "gemma3-270m.yaml").read_text(encoding="utf-8"))
    cfg["threads"] = args.threads
    torch.set_num_threads(args.threads)
    print(
        f"model {cfg['name']}, {args.threads} threads, {args.items} items (seed {args.seed}) of {args.bank}"
    )

    if args.first_load:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = LocalBackend({**cfg, "cache_dir": tmp})
            fresh.load()
            print(f"first load (GGUF -> float32, saved to cache): {fresh.load_seconds:.1f} s")
            del fresh

    backend = LocalBackend(cfg)
    backend.load()
    print(f"load from {backend.loaded_from}: {backend.load_seconds:.1f} s  ({backend.cache_dir})")

    items = customs_items(args.bank, args.items, args.seed)
    shapes = linear_shapes(backend.model)
    params = sum(i * o for i, o in shapes)
    print(f"non-embedding parameters (linear layers): {params / 1e6:.1f} M")
    achieved: dict[str, tuple[float, int]] = {}
    for condition in ("blind", "full"):
        requests = [
            ModelRequest(model=cfg["name"], system=SYSTEM, user=prompt(it, condition), choices=LABELS)
            for it in items
        ]
        rate, median, tokens = time_calls(backend, requests)
        gflops = rate * statistics.mean(tokens) * 2 * params / 1e9
        achieved[condition] = (gflops, int(statistics.median(tokens)))
        print(
            f"score {condition:5s}: {rate:5.2f} calls/s, median {median * 1000:5.0f} ms, "
            f"{statistics.mean(tokens):5.0f} input tokens, {gflops:5.1f} GFLOP/s"
        )
    gen = [
        ModelRequest(
            model=cfg["name"], system=SYSTEM, user=prompt(it, "blind"), max_tokens=args.generate_tokens
        )
        for it in items[: max(3, args.items // 5)]
    ]
    rate, median, _ = time_calls(backend, gen)
    print(f"generate {args.generate_tokens} tokens: {rate:5.2f} calls/s, median {median * 1000:5.0f} ms")

    gflops, tokens = achieved["blind"]
    peer = matmul_gflops(shapes, tokens)
    print(f"plain fp32 matmuls of the same shapes, {tokens} rows: {peer:5.1f} GFLOP/s")
    result(
        "local-model",
        f"blind scoring {gflops:.1f} GFLOP/s ({tokens} tokens)",
        f"fp32 matmul, same shapes: {peer:.1f} GFLOP/s",
        gflops / peer,
        f"load average {os.getloadavg()[0]:.1f}",
    )


if __name__ == "__main__":
    main()
