"""Few-shot prompts: the block is prepended, its answers follow the skew exactly, and it is deterministic."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.config.files import load_group, load_label_schemes, read_group
from blindmcq.config.schema import Condition, StandInModel, validate_group
from blindmcq.datasets.nonsense import generate_nonsenseqa
from blindmcq.errors import ConfigError
from blindmcq.protocols.fewshot import apply_fewshot
from blindmcq.tasks.presentations import build_presentations
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe

WORDS = [f"слово{chr(0x430 + i)}{j}" for i in range(20) for j in range(5)]
BANK = generate_nonsenseqa(seed=3, n_test=6, n_fewshot=30, words=WORDS)
PROMPT = load_group("prompt", "minimal")
REASONING = load_group("reasoning", "direct")
SL_ANSWER = re.compile(r"^Відповідь: (\S+)$", re.M)
MD_ANSWER = re.compile(r"^Остаточна відповідь: правильний варіант — «(.+)»\.$", re.M)


def presentations(protocol: str, items=BANK.test):
    labels = load_group("labels", "dash" if protocol == "md" else "latin")
    return labels, build_presentations(
        items, conditions=["full"], full_orders=["rot0"], forced=False, prompt=PROMPT, labels=labels,
        reasoning=REASONING, protocol=protocol, protocol_cfg=load_group("protocol", protocol),
        blind_orders="all",
    )  # fmt: skip


def fewshot(
    protocol: str, skew: str, n_shots: int = 10, seed: int = 0, items=BANK.test, examples=BANK.fewshot
):
    labels, plain = presentations(protocol, items)
    shot = apply_fewshot(
        plain, examples=examples, skew=skew, n_shots=n_shots, seed=seed, labels_cfg=labels, protocol=protocol
    )
    return plain, shot


def block_of(plain, shot) -> str:
    assert shot.user.endswith("\n\n" + plain.user)
    return shot.user[: -len(plain.user) - 2]


def test_block_is_prepended_and_nothing_else_changes() -> None:
    plain, shot = fewshot("sl", "all_a")
    assert len(shot) == len(plain)
    for p, s in zip(plain, shot, strict=True):
        block = block_of(p, s)
        assert block.startswith("Питання: ")
        assert s.order == p.order and s.key_slot == p.key_slot and s.option_texts == p.option_texts
        assert s.system == p.system and s.label_strings == p.label_strings
    assert len({block_of(p, s) for p, s in zip(plain, shot, strict=True)}) == 1  # one fixed prompt


@pytest.mark.parametrize(("skew", "n_shots", "expected"), [
    ("all_a", 10, {"A": 10}),
    ("a70", 10, {"A": 7, "B": 1, "C": 1, "D": 1}),
    ("uniform", 8, {"A": 2, "B": 2, "C": 2, "D": 2}),
])  # fmt: skip
def test_sl_answers_follow_the_skew_exactly(skew: str, n_shots: int, expected: dict[str, int]) -> None:
    plain, shot = fewshot("sl", skew, n_shots=n_shots)
    answers = SL_ANSWER.findall(block_of(plain[0], shot[0]))
    assert Counter(answers) == expected


def test_sl_block_answer_is_the_example_key_in_the_test_label_scheme() -> None:
    plain, shot = fewshot("sl", "a70", n_shots=10)
    by_question = {e.question: e for e in BANK.fewshot}
    for example in block_of(plain[0], shot[0]).split("\n\n"):
        lines = example.split("\n")
        item = by_question[lines[0].removeprefix("Питання: ")]
        options = {line[0]: line[3:] for line in lines[1:5]}
        assert [line[:3] for line in lines[1:5]] == ["A) ", "B) ", "C) ", "D) "]
        assert options[SL_ANSWER.search(example).group(1)] == item.options[item.key]


def test_md_block_uses_dashes_and_a_sentence_naming_the_key() -> None:
    plain, shot = fewshot("md", "all_a", n_shots=6)
    block = block_of(plain[0], shot[0])
    assert not SL_ANSWER.search(block)
    by_question = {e.question: e for e in BANK.fewshot}
    for example in block.split("\n\n"):
        lines = example.split("\n")
        item = by_question[lines[0].removeprefix("Питання: ")]
        assert all(line.startswith("- ") for line in lines[1:5])
        answer = MD_ANSWER.fullmatch(lines[5]).group(1)
        assert answer == item.options[item.key] == lines[1][2:]  # all_a: the key is listed first


def test_deterministic_and_seeded() -> None:
    _, first = fewshot("sl", "a70", seed=5)
    _, again = fewshot("sl", "a70", seed=5)
    _, other = fewshot("sl", "a70", seed=6)
    assert [p.user for p in first] == [p.user for p in again]
    assert [p.user for p in first] != [p.user for p in other]


def test_an_item_never_sees_itself_among_the_examples() -> None:
    pool = BANK.fewshot[:11]
    plain, shot = fewshot("sl", "uniform", n_shots=10, items=pool, examples=pool)
    for p, s in zip(plain, shot, strict=True):
        item = next(e for e in pool if e.id == p.item_id)
        assert f"Питання: {item.question}\n" not in block_of(p, s)


@pytest.mark.parametrize(("kwargs", "key"), [
    ({"skew": "most_a"}, "protocol.fewshot"),
    ({"n_shots": 0}, "protocol.n_shots"),
    ({"n_shots": 30}, "protocol.n_shots"),  # the pool has 30: one must stay out for the item itself
    ({"protocol": "md"}, "labels"),  # MD needs the uniform dash
    ({"protocol": "mc"}, "protocol"),
])  # fmt: skip
def test_bad_settings_name_the_key(kwargs: dict, key: str) -> None:
    labels, plain = presentations("sl")
    args = {"skew": "all_a", "n_shots": 5, "protocol": "sl", **kwargs}
    with pytest.raises(ConfigError, match=re.escape(f"'{key}'")):
        apply_fewshot(plain, examples=BANK.fewshot, seed=0, labels_cfg=labels, **args)


class Recorder:
    """A backend that answers "A" and keeps every request."""

    name = "recorder"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text="A")


def probe(protocol_cfg: dict, tmp_path, examples=BANK.fewshot):
    """The probe with ``protocol_cfg`` (as written: typed here, where it enters) on the test split."""
    backend = Recorder()
    df = run_probe(
        BANK.test, model_cfg=StandInModel(name="rec", backend="recorder"), setup=PresentationSetup(
            prompt=PROMPT, labels=load_group("labels", "latin"), reasoning=REASONING,
            condition=Condition(conditions=["full"], full_orders=["rot0"]),
            protocol=validate_group("protocol", protocol_cfg),
            schemes=load_label_schemes(),
        ),
        engine=EngineSettings(tmp_path / "c.sqlite", progress=False), backend=backend,
        fewshot_examples=examples,
    )  # fmt: skip
    return df, backend.requests


def test_probe_prepends_the_block_and_tags_the_setting(tmp_path) -> None:
    cfg = {**read_group("protocol", "sl"), "fewshot": "all_a", "n_shots": 4}
    df, requests = probe(cfg, tmp_path)
    _, plain = presentations("sl")
    assert len(requests) == len(plain) == len(df)
    for request, p in zip(
        sorted(requests, key=lambda r: r.user), sorted(plain, key=lambda p: p.user), strict=True
    ):
        assert Counter(SL_ANSWER.findall(block_of(p, request))) == {"A": 4}
    assert set(df["setting"]) == {"fewshot=all_a"}


def test_probe_without_fewshot_is_unchanged(tmp_path) -> None:
    df, requests = probe(read_group("protocol", "sl"), tmp_path)
    _, plain = presentations("sl")
    assert sorted(r.user for r in requests) == sorted(p.user for p in plain)
    assert set(df["setting"]) == {""}


def test_probe_rejects_a_bad_fewshot_seed(tmp_path) -> None:
    cfg = {**read_group("protocol", "sl"), "fewshot": "all_a", "fewshot_seed": "x"}
    with pytest.raises(ConfigError, match=r"protocol\.fewshot_seed"):
        probe(cfg, tmp_path)
