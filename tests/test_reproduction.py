"""The same answer on any machine: model scores on a fixed grid (``backends.base.quantise_response``),
stored and served so by the response cache, and a local model whose scores differ in the last bits
(another CPU's kernels, here a test double) giving the same stored scores, picks and figures."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from blindmcq.analysis.interventions import fluency_change, read_fluency
from blindmcq.analysis.metrics import habit_parts
from blindmcq.backends.base import (
    SCORE_DECIMALS,
    SCORE_FIGURE_TOLERANCE,
    ModelRequest,
    ModelResponse,
    quantise_response,
    quantise_score,
)
from blindmcq.backends.local import LocalBackend
from blindmcq.config.files import load_group, load_label_schemes
from blindmcq.config.schema import model_config
from blindmcq.datasets.items import Item
from blindmcq.engine.cache import ResponseCache
from blindmcq.engine.run import run_requests
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe
from blindmcq.tasks.rewrite import fluency_scores, write_fluency

REPO = Path(__file__).resolve().parents[1]
CFG = yaml.safe_load((REPO / "conf" / "model" / "gemma3-270m.yaml").read_text(encoding="utf-8"))
STEP = 10.0**-SCORE_DECIMALS


def on_grid(value: float) -> bool:
    return abs(value * 10**SCORE_DECIMALS - round(value * 10**SCORE_DECIMALS)) < 1e-6


# the grid ------------------------------------------------------------------------------------------


def test_a_score_goes_to_the_nearest_grid_point_once_and_for_all() -> None:
    rng = np.random.default_rng(0)
    for value in rng.uniform(-80.0, 0.0, 500):
        q = quantise_score(float(value))
        assert on_grid(q) and abs(q - value) <= STEP / 2 + 1e-12
        assert quantise_score(q) == q  # stored, read back, stored again: the same double
    assert quantise_score(-1e-9) == 0.0 and math.copysign(1.0, quantise_score(-1e-9)) == 1.0  # no -0.0
    assert math.isnan(quantise_score(math.nan)) and quantise_score(-math.inf) == -math.inf


def test_last_bit_differences_vanish_except_within_them_of_a_grid_boundary() -> None:
    """The promise and its limit: a score moved by less than a grid step lands on the same grid point
    unless it lies within that move of a boundary, so about 2 x move / step of the scores change."""
    rng = np.random.default_rng(1)
    values = rng.uniform(-60.0, -0.5, 20_000)
    for move in (1e-7, 1e-6, 1e-5):
        moved = values + rng.choice([-move, move], len(values))
        changed = np.mean(
            [quantise_score(float(a)) != quantise_score(float(b)) for a, b in zip(values, moved, strict=True)]
        )
        expected = move / STEP  # half the moves go towards the nearer boundary: 2 x move / step x 1/2
        assert expected / 2 <= changed <= expected * 2, (move, changed)
    boundary = -1.0 - STEP / 2  # halfway between two grid points
    below, above = np.nextafter(boundary, -np.inf), np.nextafter(boundary, np.inf)
    assert quantise_score(float(below)) != quantise_score(float(above))  # one ulp apart, one grid step


def test_only_the_scores_of_a_response_are_quantised() -> None:
    response = ModelResponse(
        text="B", latency_s=0.123456789, choice_logprobs=[-1.23456789, -0.5, -7.0000004],
        meta={"mode": "cloze", "logprob": [-12.3456789], "per_token": [-3.0999999], "per_char": [-0.77777],
              "n_tokens": [4.0], "prob_mass": 0.87654321, "retry_after_s": 1.23456, "stop_reason": "x"},
    )  # fmt: skip
    assert quantise_response(response) is response
    assert response.choice_logprobs == [-1.2346, -0.5, -7.0]
    assert response.meta["logprob"] == [-12.3457] and response.meta["per_token"] == [-3.1]
    assert response.meta["per_char"] == [-0.7778] and response.meta["prob_mass"] == 0.8765
    assert response.meta["n_tokens"] == [4.0] and response.meta["retry_after_s"] == 1.23456
    assert response.latency_s == 0.123456789 and response.text == "B"


# the cache -----------------------------------------------------------------------------------------


class Scorer:
    """A scoring backend answering with unrounded log-probabilities; counts what it is asked."""

    name = "scorer"
    concurrency = 1

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        return ModelResponse(text="A", choice_logprobs=[-0.1234567, -2.2222222, -3.3333333])


def test_the_cache_stores_and_serves_scores_on_the_grid(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    backend = Scorer()
    request = ModelRequest(model="m", system=None, user="q", choices=("A", "B", "C"))
    first = run_requests([request], backend, cache=path, progress=False)[0]
    assert first.response.choice_logprobs == [-0.1235, -2.2222, -3.3333] and backend.calls == 1
    with sqlite3.connect(path) as conn:
        stored = json.loads(conn.execute("SELECT response FROM responses").fetchone()[0])
    assert stored["choice_logprobs"] == [-0.1235, -2.2222, -3.3333]


def test_a_row_stored_before_the_grid_is_served_on_it_with_no_new_call(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    backend = Scorer()
    request = ModelRequest(model="m", system=None, user="q", choices=("A", "B", "C"))
    run_requests([request], backend, cache=path, progress=False)
    old = {"text": "A", "choice_logprobs": [-0.1234567, -2.2222222, -3.3333333],
           "meta": {"mode": "cloze", "per_char": [-0.0123456, -0.2, -0.3]}}  # fmt: skip
    with sqlite3.connect(path) as conn:  # as an earlier version wrote it: raw floats
        conn.execute("UPDATE responses SET response = ?", (json.dumps(old),))
    again = run_requests([request], backend, cache=path, progress=False)[0]
    assert backend.calls == 1 and again.cached
    assert again.response.choice_logprobs == [-0.1235, -2.2222, -3.3333]
    assert again.response.meta["per_char"] == [-0.0123, -0.2, -0.3]
    with ResponseCache(path) as cache:
        assert cache.bad_rows() == (1, [])  # a row on no grid still fits the schema


# a local model on another CPU -----------------------------------------------------------------------


class CharTokenizer:
    """One token per character (ids 3..96), 2 = beginning of text: enough for the scoring code paths."""

    pad_token_id = 0
    chat_template = None

    def __call__(self, text: str, **_: Any) -> SimpleNamespace:
        return SimpleNamespace(input_ids=[2] + [3 + ord(c) % 94 for c in text])


def tiny_local(cfg: dict[str, Any], *, perturb_seed: int | None = None) -> LocalBackend:
    """The local backend around a tiny random Gemma 3 (the same weights every time). With
    ``perturb_seed``, a test double of another CPU: every logit the model computes is moved by one
    float32 ulp of a log-probability, up or down at random, as processors whose float32 kernels differ
    in the last bit would."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, sliding_window=64, max_position_embeddings=512,
        layer_types=["sliding_attention", "full_attention"],
    )  # fmt: skip
    torch.manual_seed(0)
    backend = LocalBackend(model_config({**CFG, **cfg}))
    backend.model = Gemma3ForCausalLM(config).eval()
    backend.tokenizer = CharTokenizer()
    backend._cloze_memo = {}  # scores of its own, not the process-wide memo's
    if perturb_seed is not None:
        gen = torch.Generator().manual_seed(perturb_seed)

        def last_bit(_module: Any, _inputs: Any, out: Any) -> Any:
            # one float32 ulp at the scale of the log-probabilities (|log p| ~ 4 here), not of the tiny
            # model's logits (~0.01), whose ulp the log-softmax would round away on some CPUs and not others
            sign = torch.where(torch.rand(out.shape, generator=gen) < 0.5, 1.0, -1.0).to(out.dtype)
            return out + sign * 2.0**-21

        backend.model.get_output_embeddings().register_forward_hook(last_bit)
    return backend


def bank() -> list[Item]:
    words = ["закон", "суд", "право", "кодекс", "стаття", "норма", "позов", "рішення", "вирок", "апеляція"]
    items = []
    for n in range(8):
        options = tuple(f"{words[(n + j) % 10]} {words[(3 * n + 2 * j) % 10]}" + " і" * j for j in range(4))
        items.append(Item(f"t-b-{n}", "t", "b", n, f"Питання {n} про {words[n]}?", options, key=n % 4))
    return items


def setup(condition: str) -> PresentationSetup:
    return PresentationSetup(
        prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
        reasoning=load_group("reasoning", "direct"), condition=load_group("condition", condition),
        protocol=load_group("protocol", "sl"), schemes=load_label_schemes(),
    )  # fmt: skip


def stored_scores(cache: Path, keys: list[str]) -> dict[str, list[float] | None]:
    with ResponseCache(cache) as c:
        return {k: hit.response.choice_logprobs for k, hit in c.get_many(keys).items()}


@pytest.mark.parametrize(
    "cfg",
    [{"name": "tiny"}, {"name": "tiny-cloze", "scoring": "cloze", "cloze_norm": "token"}],
    ids=["letter", "cloze"],
)
def test_last_bit_noise_in_the_model_leaves_stored_scores_picks_and_figures_alone(
    tmp_path: Path, cfg: dict[str, Any]
) -> None:
    import torch

    items = bank()
    here, there = tiny_local(cfg), tiny_local(cfg, perturb_seed=7)
    # The doubles differ in the last bits somewhere (which continuations show a one-ulp move in the logits
    # depends on the CPU's log-softmax kernel, so look at every option, not one pair) and nowhere by more.
    pairs = [here.encode_pair("Відповідь:", " " + o) for it in items for o in it.options]
    with torch.inference_mode():
        raw = [(here._continuation_logprob(*p), there._continuation_logprob(*p)) for p in pairs]
    assert any(h != t for h, t in raw) and all(abs(h - t) < 1e-4 for h, t in raw)

    frames = {}
    for name, backend in (("here", here), ("there", there)):
        frames[name] = run_probe(
            items, model_config({**CFG, **cfg}), setup("blind"),
            EngineSettings(tmp_path / f"{name}.sqlite", progress=False), backend=backend,
        )  # fmt: skip
    a, b = frames["here"], frames["there"]
    assert len(a) == 8 * 8 and list(a["request_hash"]) == list(b["request_hash"])
    keys = list(a["request_hash"])
    scores_here, scores_there = (
        stored_scores(tmp_path / "here.sqlite", keys),
        stored_scores(tmp_path / "there.sqlite", keys),
    )
    assert all(on_grid(v) for row in [*scores_here.values(), *scores_there.values()] for v in row or [])
    # the scores differ from call to call, so the comparison is not vacuous
    assert len({tuple(row or []) for row in scores_here.values()}) > 8
    # The promise (README, "Reproduction"): a stored score moves only where it lay within the noise of a
    # grid boundary, and then by one step; most land on the same grid point.
    pairs = [(x, y) for k in keys for x, y in zip(scores_here[k] or [], scores_there[k] or [], strict=True)]
    moved = [(x, y) for x, y in pairs if x != y]
    assert all(abs(x - y) <= STEP * (1 + 1e-9) for x, y in moved), moved
    assert len(moved) <= 0.1 * len(pairs), (len(moved), len(pairs))
    # a pick moves only where the call's two best options lay within the noise of each other
    for key, row_a, row_b in zip(keys, a.itertuples(), b.itertuples(), strict=True):
        best = sorted(scores_here[key] or [], reverse=True)
        if len(best) > 1 and best[0] - best[1] > 2 * STEP:
            for column in ("picked_slot", "parse_status", "raw_response", "correct"):
                assert getattr(row_a, column) == getattr(row_b, column), (key, column)
    if list(a["picked_slot"]) != list(b["picked_slot"]):
        return  # a pick moved within the noise: the figures may move by that pick, as the README says
    by_n_here = habit_parts(a, 4)[0]
    by_n_there = habit_parts(b, 4)[0]
    for column in ("blind_acc", "habit", "excess"):
        assert by_n_here[column].to_numpy() == pytest.approx(by_n_there[column].to_numpy(), abs=0)


def test_fluency_figures_agree_within_the_stated_tolerance(tmp_path: Path) -> None:
    items = bank()
    rewritten = [
        dataclasses.replace(
            it, options=tuple(o if j == it.key else o + " так" for j, o in enumerate(it.options))
        )
        for it in items
    ]
    cfg = {**CFG, "name": "tiny-cloze", "scoring": "cloze", "cloze_norm": "token"}

    def figures(backend: LocalBackend, cache: Path) -> dict[str, float]:
        scores = fluency_scores(
            items, rewritten, model_config(cfg), "Відповідь:", cache=cache, backend=backend
        )
        return fluency_change(scores)

    here = figures(tiny_local(cfg), tmp_path / "here.sqlite")
    there = figures(tiny_local(cfg, perturb_seed=11), tmp_path / "there.sqlite")
    assert here["fluency_n"] == there["fluency_n"] == 8 * 3
    assert here["fluency_up"] + here["fluency_down"] > 0
    for name in ("fluency_before", "fluency_after", "fluency_keys"):
        assert here[name] == pytest.approx(there[name], abs=SCORE_FIGURE_TOLERANCE), name
    assert here == there  # in fact identical: no score lay within the noise of a grid boundary


def direct_fluency(
    backend: LocalBackend, original: list[Item], rewritten: list[Item], cue: str
) -> dict[str, float]:
    """The fluency figures computed straight from a backend, with no engine or file in between: per item
    with changed distractors, one ``score_options`` call, one sequence per pass (the reference)."""
    from blindmcq.stats import item_sign_test

    context = backend.cloze_context(None, cue)
    before, after, keys, item_before, item_after = [], [], [], [], []
    for old, new in zip(original, rewritten, strict=True):
        changed = [j for j, (a, b) in enumerate(zip(old.options, new.options, strict=True)) if a != b]
        if not changed:
            continue
        texts = [old.options[j] for j in changed] + [new.options[j] for j in changed]
        scores = backend.score_options(context, [*texts, old.options[old.key]], batch_size=1)
        old_scores = [sc["per_token"] for sc in scores[: len(changed)]]
        new_scores = [sc["per_token"] for sc in scores[len(changed) : 2 * len(changed)]]
        before += old_scores
        after += new_scores
        item_before.append(float(np.mean(old_scores)))
        item_after.append(float(np.mean(new_scores)))
        keys.append(scores[-1]["per_token"])
    test = item_sign_test(pd.Series(item_before), pd.Series(item_after))
    return {
        "fluency_n": float(len(before)), "fluency_items": float(len(item_before)),
        "fluency_before": round(float(pd.Series(before).mean()), 4),
        "fluency_after": round(float(pd.Series(after).mean()), 4),
        "fluency_keys": round(float(np.mean(keys)), 4),
        "fluency_up": float(test.up), "fluency_down": float(test.down), "fluency_sign_p": test.p,
    }  # fmt: skip


def test_fluency_from_the_written_scores_is_the_direct_figures_and_a_rerun_scores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewrite stage's path (requests through the engine and the response cache, ``fluency.jsonl``
    written and read back, the figures from it) gives the very figures a direct one-sequence-a-pass
    computation gives; a second run on the same cache makes no forward pass, with the same file."""
    items = bank()
    # 5 items rewritten (one of them in a single distractor), 3 left alone; items 2 and 3 share rewrites

    def rewrite(n: int, it: Item) -> Item:
        def text(j: int, o: str) -> str:
            if n >= 5 or j == it.key or (n == 4 and j != (it.key + 1) % 4):
                return o
            return f"спільний варіант {j}" if n in (2, 3) else f"{o} і так"

        return dataclasses.replace(it, options=tuple(text(j, o) for j, o in enumerate(it.options)))

    rewritten = [rewrite(n, it) for n, it in enumerate(items)]
    cfg = {**CFG, "name": "tiny-cloze", "scoring": "cloze", "cloze_norm": "token"}
    passes: list[int] = []
    real = LocalBackend._continuation_logprob

    def counted(self: LocalBackend, ctx: Any, cont: Any) -> float:
        passes.append(len(cont))
        return real(self, ctx, cont)

    monkeypatch.setattr(LocalBackend, "_continuation_logprob", counted)
    direct = direct_fluency(tiny_local(cfg), items, rewritten, "Відповідь:")
    assert direct["fluency_items"] == 5 and direct["fluency_n"] == 4 * 3 + 1

    runs = []
    for _ in range(2):
        passes.clear()
        scores = fluency_scores(
            items,
            rewritten,
            model_config(cfg),
            "Відповідь:",
            cache=tmp_path / "c.sqlite",
            backend=tiny_local(cfg),
        )
        write_fluency(tmp_path / "fluency.jsonl", scores)
        runs.append((len(passes), (tmp_path / "fluency.jsonl").read_bytes()))
        assert fluency_change(read_fluency(tmp_path / "fluency.jsonl")) == direct
    (first, written), (second, again) = runs
    assert first == scores["text"].nunique() < len(scores)  # one pass per distinct text
    assert second == 0 and again == written
    assert (
        set(scores["version"]) == {"before", "after", "key"} and scores["request_hash"].str.len().eq(64).all()
    )
