"""Distractor rewriting: keys and items are never touched or dropped; provenance and failures recorded."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.config.schema import RewriteIntervention, typed, validate_group
from blindmcq.datasets.items import Item, read_items, write_items
from blindmcq.datasets.registry import load_dataset
from blindmcq.engine.cache import ResponseCache
from blindmcq.errors import ConfigError
from blindmcq.tasks.rewrite import (
    PROMPTS,
    RewriteConfig,
    clean_generation,
    diff_frame,
    pad_or_trim,
    rewrite_items,
    rewrite_template,
    write_diff,
)


def rewrite_config(cfg: dict) -> RewriteConfig:
    """``intervention.rewrite`` typed through its schema (as a stage's is), then the rewriter's fields."""
    return RewriteConfig.of(typed(RewriteIntervention, cfg, "intervention.rewrite"))


@pytest.fixture(scope="module")
def bank(samples: Path) -> list[Item]:
    path = samples / "ua-customs-exam" / "questions.json"
    return load_dataset(
        validate_group("dataset", {"loader": "customs", "path": str(path), "parts": ["legislation"]})
    )


class FakeRewriter:
    """Rewrites by rule of the distractor's first letter, so each failure kind occurs on real items."""

    name = "fake-rewriter"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        key = re.search(r"^Правильний варіант: (.*)$", request.user, re.M).group(1)
        distractor = re.search(r"^Неправильний варіант: (.*)$", request.user, re.M).group(1)
        rule = len(distractor) % 5
        if rule == 0:
            raise RuntimeError("backend down")
        if rule == 1:
            return ModelResponse(text="  \n")
        if rule == 2:
            return ModelResponse(text=f"«{key}»\nпояснення")
        if rule == 3:
            return ModelResponse(text="", status="refused")
        return ModelResponse(text=f"- {distractor} відповідно до закону\nзайве")


def _assert_same_bank(before: list[Item], after: list[Item]) -> None:
    assert [i.id for i in after] == [i.id for i in before]
    for old, new in zip(before, after, strict=True):
        assert (new.key, new.question, new.n_options, new.status) == (
            old.key,
            old.question,
            old.n_options,
            old.status,
        )
        assert new.options[new.key] == old.options[old.key]
        info = new.meta["rewrite"]
        assert info["source_item"] == old.id and info["original_options"] == list(old.options)
        assert info["changed"] == [j for j in range(old.n_options) if new.options[j] != old.options[j]]
        assert old.key not in info["changed"] and str(old.key) not in info["status"]


def test_model_rewriter_keeps_keys_and_flags_failures(bank: list[Item]) -> None:
    items = bank[:40]
    fake = FakeRewriter()
    conf = rewrite_config({"rewriter": "model", "model": {"name": "fake", "backend": "none"}})
    out = rewrite_items(items, conf, backend=fake)
    _assert_same_bank(items, out)
    assert fake.calls == 3 * len(items)
    statuses: dict[str, int] = {}
    for old, new in zip(items, out, strict=True):
        info = new.meta["rewrite"]
        assert info["model"] == "fake" and info["backend"] == "fake-rewriter"
        assert info["prompt_sha256"] == hashlib.sha256(rewrite_template("uk").encode()).hexdigest()
        for j_text, status in info["status"].items():
            j = int(j_text)
            statuses[status] = statuses.get(status, 0) + 1
            expected = {0: "error", 1: "empty", 2: "equals_key", 3: "refused"}.get(len(old.options[j]) % 5)
            if expected is None:
                assert status == "rewritten"
                assert new.options[j] == f"{old.options[j]} відповідно до закону"
            else:
                assert status == expected and new.options[j] == old.options[j]
    assert set(statuses) == {"error", "empty", "equals_key", "refused", "rewritten"}


def test_model_rewrites_are_cached(bank: list[Item], tmp_path: Path) -> None:
    conf = rewrite_config({"rewriter": "model", "model": {"name": "fake"}})
    first, second = FakeRewriter(), FakeRewriter()
    a = rewrite_items(bank[:5], conf, backend=first, cache=tmp_path / "c.sqlite")
    b = rewrite_items(bank[:5], conf, backend=second, cache=tmp_path / "c.sqlite")
    errors = sum(s == "error" for i in a for s in i.meta["rewrite"]["status"].values())
    assert first.calls == 15 and second.calls == errors  # only the uncached failures are asked again
    assert [i.options for i in a] == [i.options for i in b]
    assert len(ResponseCache(tmp_path / "c.sqlite")) == 15 - errors


def test_english_prompt_has_its_own_hash(bank: list[Item]) -> None:
    conf = rewrite_config({"rewriter": "model", "language": "en", "model": {"name": "fake"}})
    seen: list[str] = []

    class Echo:
        name = "echo"

        def complete(self, request: ModelRequest) -> ModelResponse:
            seen.append(request.user)
            return ModelResponse(text="a different wrong statement " + str(len(seen)))

    out = rewrite_items(bank[:2], conf, backend=Echo())
    assert all(
        u.startswith("You are editing") and u.rstrip().endswith("Rewritten wrong option:") for u in seen
    )
    english = hashlib.sha256(rewrite_template("en").encode()).hexdigest()
    assert out[0].meta["rewrite"]["prompt_sha256"] == english
    assert PROMPTS["en"] != PROMPTS["uk"]


def test_length_match_moves_distractors_toward_the_key(bank: list[Item]) -> None:
    out = rewrite_items(bank, rewrite_config({"rewriter": "length_match", "tolerance": 0.15}))
    _assert_same_bank(bank, out)
    moved = 0
    for old, new in zip(bank, out, strict=True):
        target = len(old.options[old.key])
        for j in new.meta["rewrite"]["changed"]:
            moved += 1
            assert abs(len(new.options[j]) - target) < abs(len(old.options[j]) - target)
        assert len({" ".join(o.split()).casefold() for o in new.options}) == new.n_options or (
            "duplicate_options" in old.flags
        )
    # the customs keys are longer than their distractors: many get padded (over 300 of 1,020 in the full part)
    assert moved > 0.25 * sum(i.n_options - 1 for i in bank)
    again = rewrite_items(bank, rewrite_config({"rewriter": "length_match"}))
    assert [i.options for i in again] == [i.options for i in out]  # deterministic


def test_length_match_keeps_every_option_well_formed(bank: list[Item]) -> None:
    """Trimming keeps whole clauses (the old rule cut "такого строку не надається" to "такого"), padding
    appends whole phrases of other items' distractors: never a phrase broken in the middle."""
    out = rewrite_items(bank, rewrite_config({"rewriter": "length_match"}))
    every_distractor = {
        o.strip().rstrip(" .;:,").casefold() for i in bank for j, o in enumerate(i.options) if j != i.key
    }
    padded = 0
    for new in out:
        originals = new.meta["rewrite"]["original_options"]
        for j, status in new.meta["rewrite"]["status"].items():
            old, text = originals[int(j)], new.options[int(j)]
            if status == "trimmed":
                assert old.startswith(text) and old[len(text)] in ",;: -–—", (old, text)
                assert re.match(r"[,;:]\s|\s[–—-]\s", old[len(text) :]), (old, text)
            elif status == "padded":
                padded += 1
                base = old.rstrip(" .;")
                assert text.startswith(base + ", ")
                assert _whole_phrases(text[len(base) + 2 :].casefold(), every_distractor), text
    assert padded > 0


def _whole_phrases(tail: str, phrases: set[str]) -> bool:
    """Whether ``tail`` is whole ``phrases`` joined by ", " (phrases may hold commas themselves)."""
    if tail in phrases:
        return True
    return any(
        tail.startswith(p + ", ") and _whole_phrases(tail[len(p) + 2 :], phrases) for p in phrases if p
    )


def test_pad_or_trim_cuts_only_where_a_clause_ends() -> None:
    rng = random.Random(0)
    assert pad_or_trim("такого строку не надається", 8, [], rng) == ("такого строку не надається", "kept")
    text = "рішення приймає керівник органу, або його заступник, у межах повноважень"
    assert pad_or_trim(text, 30, [], rng) == ("рішення приймає керівник органу", "trimmed")
    padded, status = pad_or_trim("так", 20, ["Митний огляд товарів."], rng)
    assert (padded, status) == ("так, митний огляд товарів", "padded")


def test_length_match_pads_from_statutes_of_the_items_act(bank: list[Item], repo_root: Path) -> None:
    statutes = repo_root / "defaults" / "statutes" / "provisions-default.jsonl"
    conf = rewrite_config({"rewriter": "length_match", "pad_source": "statutes", "statutes": str(statutes)})
    out = rewrite_items(bank[:30], conf)
    _assert_same_bank(bank[:30], out)
    padded = [(i, j) for i in out for j, s in i.meta["rewrite"]["status"].items() if s == "padded"]
    assert padded and all(
        i.options[int(j)].startswith(i.meta["rewrite"]["original_options"][int(j)].rstrip(" .;"))
        for i, j in padded
    )


_text = st.text(alphabet="абвгдежзийклмнопрстуфхцчшщ ", min_size=1, max_size=60).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(
    options=st.lists(_text, min_size=2, max_size=6, unique_by=lambda s: " ".join(s.split())),
    key_seed=st.integers(0, 100),
    others=st.lists(_text, min_size=0, max_size=8),
)
def test_length_match_never_touches_key_or_drops_item(
    options: list[str], key_seed: int, others: list[str]
) -> None:
    key = key_seed % len(options)
    item = Item("s-b-1", "s", "b", 1, "питання", tuple(options), key)
    pad = Item("s-b-2", "s", "b", 2, "інше", (*others, "ключ"), len(others)) if others else None
    items = [item, pad] if pad else [item]
    out = rewrite_items(items, rewrite_config({"rewriter": "length_match", "tolerance": 0.0}))
    _assert_same_bank(items, out)


def test_unusable_items_pass_through(bank: list[Item], tmp_path: Path) -> None:
    broken = Item("x-b-9", "x", "b", 9, "q", ("a", "b"), None, status="malformed", flags=("invariant",))
    out = rewrite_items([broken, bank[0]], RewriteConfig())
    assert out[0] == broken and "rewrite" not in out[0].meta
    write_items(tmp_path / "items.jsonl", out)
    assert [i.id for i in read_items(tmp_path / "items.jsonl")] == [broken.id, bank[0].id]


def test_diff_view(bank: list[Item], tmp_path: Path) -> None:
    out = rewrite_items(bank[:10], RewriteConfig())
    frame = write_diff(out, tmp_path)
    assert len(frame) == 30 and frame.equals(diff_frame(out))
    assert (tmp_path / "diff.csv").read_text(encoding="utf-8").count("\n") >= 31
    md = (tmp_path / "diff.md").read_text(encoding="utf-8")
    assert all(f"## {i.id}" in md for i in out)
    changed = frame[frame["changed"]].iloc[0]
    assert changed["original"] != changed["rewritten"] and changed["rewritten"] in md


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (
            "  «не більше третини його штатної чисельності»\nПояснення: ...",
            "не більше третини його штатної чисельності",
        ),
        ("- Кабінет Міністрів України", "Кабінет Міністрів України"),
        ("Б) Верховна Рада України", "Верховна Рада України"),
        ('\n\n"Президент України"', "Президент України"),
        ("", ""),
    ],
)
def test_clean_generation(raw: str, clean: str) -> None:
    assert clean_generation(raw) == clean


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"rewriter": "llm"}, "intervention.rewrite.rewriter"),
        ({"language": "de"}, "intervention.rewrite.language"),
        ({"pad_source": "web"}, "intervention.rewrite.pad_source"),
        ({"pad_source": "statutes"}, "intervention.rewrite.statutes"),
        ({"tolerance": 1.5}, "intervention.rewrite.tolerance"),
        ({"rewriter": "model", "model": None}, "intervention.rewrite.model"),
    ],
)
def test_bad_config_names_the_key(cfg: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)):
        rewrite_config(cfg)


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ("\n1.\n2.\n3.", "empty"), ("  ...", "empty"), ("«»", "empty"), ("17", "empty"),
        ("Неправильний варіант:", "echo"), ("Видаліть правильний варіант:", "echo"),
        ("Rewritten wrong option", "echo"),
    ],
)  # fmt: skip
def test_a_rewrite_without_content_keeps_the_original(bank: list[Item], raw: str, status: str) -> None:
    class Junk:
        name = "junk"

        def complete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse(text=raw)

    conf = rewrite_config({"rewriter": "model", "model": {"name": "junk"}})
    out = rewrite_items(bank[:3], conf, backend=Junk())
    assert [i.options for i in out] == [i.options for i in bank[:3]]
    assert {s for i in out for s in i.meta["rewrite"]["status"].values()} == {status}


def test_a_truncated_rewrite_is_rejected_and_a_reasoning_model_gets_its_room(bank: list[Item]) -> None:
    """A rewrite cut off at the token limit is an unfinished phrase: the original stays, status
    ``truncated``. A model that reasons by default is given its own, larger token room, not 96."""
    conf = rewrite_config(
        {"rewriter": "model", "model": {"name": "r", "reasons_by_default": True, "max_tokens": 2048}}
    )
    rooms: list[int] = []

    class Cut:
        name = "cut"

        def complete(self, request: ModelRequest) -> ModelResponse:
            rooms.append(int(request.max_tokens))
            return ModelResponse(text="відповідно до статті", meta={"stop_reason": "max_tokens"})

    out = rewrite_items(bank[:3], conf, backend=Cut())
    assert set(rooms) == {2048}
    for new, old in zip(out, bank[:3], strict=True):
        assert new.options == old.options
        assert set(new.meta["rewrite"]["status"].values()) == {"truncated"}
