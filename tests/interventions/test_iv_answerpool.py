"""AnswerPool: exact chance rates (checked by enumeration), exact ground truth, abstention, parsing."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from blindmcq.analysis.interventions import score_pool
from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.config.schema import (
    AnswerPoolIntervention,
    HeuristicModel,
    LocalModel,
    StandInModel,
    typed,
    validate_group,
)
from blindmcq.datasets.items import Item
from blindmcq.datasets.registry import load_dataset
from blindmcq.errors import ConfigError
from blindmcq.params import load_params
from blindmcq.tasks.answerpool import (
    ABSTAIN,
    BANK,
    TEXT,
    PoolConfig,
    PoolGroup,
    build_groups,
    chance_group,
    chance_question,
    entry_labels,
    parse_assignment,
    render_prompt,
    run_answerpool,
)
from blindmcq.vocabulary import PROMPT_LANGUAGES


def pool_config(cfg: dict) -> PoolConfig:
    """``intervention.answerpool`` typed through its schema (as a stage's is), then the task's fields."""
    return PoolConfig.of(typed(AnswerPoolIntervention, cfg, "intervention.answerpool"))


@pytest.fixture(scope="module")
def bank(samples: Path) -> list[Item]:
    path = samples / "ua-customs-exam" / "questions.json"
    return load_dataset(
        validate_group("dataset", {"loader": "customs", "path": str(path), "parts": ["legislation"]})
    )


# ------------------------------------------------------------------- chance, by brute force


def _enumerate(pool: int, n: int) -> list[tuple[int, ...]]:
    """Every answer sheet a group's prompt admits: an entry or abstention for each question."""
    return list(itertools.product([*range(pool), ABSTAIN], repeat=n))


def _truths(pool: int, n: int) -> list[tuple[int | None, ...]]:
    return list(itertools.product([*range(pool), None], repeat=n))


@pytest.mark.parametrize(("pool", "n"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 2), (3, 3)])
def test_group_chance_matches_enumeration(pool: int, n: int) -> None:
    space = _enumerate(pool, n)
    for truth in _truths(pool, n):  # truths that repeat an entry included: two keys can share one
        target = tuple(ABSTAIN if t is None else t for t in truth)
        exact = Fraction(sum(a == target for a in space), len(space))
        assert chance_group(pool, len(truth)) == exact, truth


@pytest.mark.parametrize(("pool", "n"), [(2, 2), (4, 3), (5, 3), (6, 2)])
def test_question_chance_matches_enumeration(pool: int, n: int) -> None:
    space = _enumerate(pool, n)
    for answer in [0, pool - 1, ABSTAIN]:
        exact = Fraction(sum(a[0] == answer for a in space), len(space))
        assert chance_question(pool) == exact


# ------------------------------------------------------------------- groups and truth


def test_groups_pool_every_option_and_delete_keys_exactly(bank: list[Item]) -> None:
    conf = PoolConfig(group_size=5, delete_share=0.2, seed=3)
    groups = build_groups(bank, conf)
    by_id = {i.id: i for i in bank}
    grouped = [i for g in groups for i in g.item_ids]
    assert sorted(grouped) == sorted(by_id)  # every item in exactly one group
    deleted = {i for g in groups for i in g.deleted}
    assert len(deleted) == round(0.2 * len(bank))
    norm = lambda s: " ".join(s.split()).casefold()  # noqa: E731
    for g in groups:
        assert {by_id[i].bank for i in g.item_ids} == {g.context} and len(g.item_ids) in (4, 5)
        assert len({norm(e) for e in g.pool}) == len(g.pool)  # deduplicated
        removed = {norm(by_id[i].options[by_id[i].key]) for i in g.deleted}
        every = {norm(o) for i in g.item_ids for o in by_id[i].options}
        assert {norm(e) for e in g.pool} == every - removed
        for item_id, truth in zip(g.item_ids, g.truth, strict=True):
            item = by_id[item_id]
            if truth is None:
                assert norm(item.options[item.key]) in removed
            else:
                assert norm(g.pool[truth]) == norm(item.options[item.key])
    assert build_groups(bank, conf) == groups  # seeded
    assert build_groups(bank, PoolConfig(seed=4)) != groups


def test_group_by_meta_key(bank: list[Item]) -> None:
    groups = build_groups(bank[:120], PoolConfig(group_by="act", group_size=6))
    assert {g.context for g in groups} <= {i.meta["act"] for i in bank}
    with pytest.raises(ConfigError, match="group_by"):
        build_groups(bank[:5], PoolConfig(group_by="chapter"))


def test_blind_prompt_hides_stems_full_shows_them(bank: list[Item]) -> None:
    group = build_groups(bank[:10], PoolConfig())[0]
    blind, full = render_prompt(group, "blind", language="uk"), render_prompt(group, "full", language="uk")
    for k, entry in enumerate(group.pool, start=1):
        assert f"\n{k}. {entry}\n" in blind + "\n" and f"\n{k}. {entry}\n" in full + "\n"
    assert all(q not in blind and q in full for q in group.questions)
    assert "Питання 5: (текст запитання не наведено)" in blind
    scored = render_prompt(group, "blind", slot=2, language="uk")
    assert scored.endswith("Відповіді:\nПитання 3:")


# ------------------------------------------------------------------- answering and scoring


class Oracle:
    """Generates the right assignment (abstaining where the key was deleted), or always abstains."""

    name = "oracle"

    def __init__(self, groups: list[PoolGroup], always_abstain: bool = False) -> None:
        self.truth = {render_prompt(g, c, language="uk"): g.truth for g in groups for c in ("blind", "full")}
        self.always_abstain = always_abstain

    def complete(self, request: ModelRequest) -> ModelResponse:
        truth = self.truth[request.user]
        lines = [
            f"{k}: {'немає' if t is None or self.always_abstain else t + 1}" for k, t in enumerate(truth, 1)
        ]
        return ModelResponse(text="Ось відповіді:\n" + "\n".join(lines))


def test_abstention_is_the_correct_response_to_an_unanswerable_question(bank: list[Item]) -> None:
    conf = PoolConfig(delete_share=0.3, scoring="generate")
    groups = build_groups(bank[:40], conf)
    model = StandInModel(name="oracle", backend="oracle")
    right = run_answerpool(bank[:40], conf, model_cfg=model, backend=Oracle(groups))
    assert right["correct"].all() and (right["abstained"] == ~right["answerable"]).all()
    # a row's group chance guesses each question alone among the entries and abstention
    independent = (right["pool_size"] + 1.0) ** -right["n_questions"]
    assert right["group_chance"].tolist() == pytest.approx(independent.tolist(), rel=1e-12)
    abstain = run_answerpool(bank[:40], conf, model_cfg=model, backend=Oracle(groups, always_abstain=True))
    assert (abstain["correct"] == ~abstain["answerable"]).all()
    scores = score_pool(abstain).set_index("condition")
    assert (scores["abstention"] == 1.0).all() and (scores["false_abstention"] == 1.0).all()
    assert (scores["answerable_acc"] == 0.0).all()
    assert scores.loc["full", "pooled_acc"] == pytest.approx((~abstain["answerable"]).mean())
    full = score_pool(right).set_index("condition")
    assert (full["group_acc"] == 1.0).all() and (
        full["set_hit"] == right.groupby("condition")["answerable"].mean()
    ).all()


def test_heuristic_scoring_end_to_end_on_real_items(bank: list[Item]) -> None:
    conf = PoolConfig(delete_share=0.2)
    frame = run_answerpool(
        bank[:20], conf, model_cfg=HeuristicModel(name="longest", backend="heuristic", strategy="longest")
    )
    groups = {g.group_id: g for g in build_groups(bank[:20], conf)}
    assert len(frame) == 40 and (frame["parse_status"] == "ok").all() and not frame["abstained"].any()
    for row in frame.itertuples():
        pool = groups[row.group_id].pool
        assert len(pool[row.picked_entry - 1]) == max(map(len, pool))  # a longest entry (ties at random)
        assert row.chance == pytest.approx(1 / (len(pool) + 1))
        assert row.correct == (row.answerable and row.picked_entry == row.truth_entry)


class Scorer:
    """A scoring backend that prefers a fixed label when offered, else the first choice."""

    name = "scorer"

    def __init__(self, label: str) -> None:
        self.label = label
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        pick = self.label if self.label in request.choices else request.choices[0]
        return ModelResponse(text=pick, choice_logprobs=[0.0 if c == pick else -9.0 for c in request.choices])


@pytest.mark.parametrize(("style", "pattern"), [("auto", r"^([A-Z])\. "), ("numbers", r"^(\d+)\. ")])
def test_scored_requests_offer_every_entry_and_abstention(bank: list[Item], style: str, pattern: str) -> None:
    conf = PoolConfig(scoring="score", conditions=("blind",), entry_labels=style)
    scorer = Scorer("немає")
    frame = run_answerpool(bank[:10], conf, model_cfg=LocalModel(name="s", backend="local"), backend=scorer)
    assert len(scorer.requests) == 10 and frame["abstained"].all() and frame["parse_status"].eq("ok").all()
    for request in scorer.requests:
        labels = re.findall(pattern, request.user, re.M)
        assert request.choices == (*labels, "немає") and len(labels) == frame["pool_size"].iloc[0]
        assert request.extra["answer_prefix"] == "" and re.search(r"Питання \d+:$", request.user)
    second = Scorer("B" if style == "auto" else "2")
    picks = run_answerpool(bank[:10], conf, model_cfg=LocalModel(name="s", backend="local"), backend=second)
    assert (picks["picked_entry"] == 2).all()


def test_letter_labels_parse_and_cap(bank: list[Item]) -> None:
    assert parse_assignment("1: C\n2: немає\n3 - Z", 3, entry_labels(20, "letters")) == [2, ABSTAIN, None]
    with pytest.raises(ConfigError, match="entry_labels"):
        entry_labels(27, "letters")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1: 17\n2: немає\n3: 4", [16, ABSTAIN, 3]),
        ("Питання 1 — 5\nПитання 2: варіант 12\nПитання 3: Немає", [4, 11, ABSTAIN]),
        ("**1**: 2\n**2**: 3\n3) 1", [1, 2, 0]),
        ("Відповіді:\n1. 7\n2 - none\n3: 99", [6, ABSTAIN, None]),
        ("1: 3\n1: 4\n3: №8", [2, None, 7]),
        ("Question 2: option 6\nQ3: N/A", [None, 5, ABSTAIN]),
        ("I cannot answer this.", [None, None, None]),
        ("4: 1\n0: 2", [None, None, None]),
    ],
)
def test_parse_assignment(text: str, expected: list[int | None]) -> None:
    assert parse_assignment(text, 3, 20) == expected


def test_unparseable_counts_as_wrong(bank: list[Item]) -> None:
    class Mute:
        name = "mute"

        def complete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse(text="не знаю")

    conf = PoolConfig(scoring="generate")
    frame = run_answerpool(bank[:10], conf, model_cfg=StandInModel(name="m"), backend=Mute())
    assert (frame["parse_status"] == "unparseable").all() and not frame["correct"].any()
    assert (score_pool(frame)["unparseable"] == 1.0).all()


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"group_size": 1}, "group_size"),
        ({"delete_share": 1.2}, "delete_share"),
        ({"conditions": ["hidden"]}, "conditions"),
        ({"scoring": "vote"}, "scoring"),
        ({"language": "fr"}, "language"),
    ],
)
def test_bad_config_names_the_key(cfg: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=f"intervention.answerpool.{key}"):
        pool_config(cfg)


def test_the_languages_are_those_with_prompt_words(bank: list[Item]) -> None:
    """``vocabulary.PROMPT_LANGUAGES`` is the one list of languages: the schema's type, and each has the
    prompt's and the bank's words (AnswerPool's and the rewriter's) and renders both conditions."""
    from blindmcq.tasks import rewrite

    assert set(BANK) == set(TEXT) == set(PROMPT_LANGUAGES) == {"uk", "en"}
    assert set(rewrite.BANK) == set(rewrite.PROMPTS) == set(PROMPT_LANGUAGES)
    group = build_groups(bank[:5], PoolConfig(group_size=5, delete_share=0.0))[0]
    for language in PROMPT_LANGUAGES:
        conf = PoolConfig.of(validate_group("intervention", {"language": language}))
        prompts = {render_prompt(group, c, conf.language) for c in ("blind", "full")}
        assert len(prompts) == 2 and all(TEXT[language]["none"] in p for p in prompts)


@pytest.mark.parametrize("intervention", ["answerpool", "rewrite"])
def test_a_language_without_prompt_words_stops_where_the_config_enters(
    intervention: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    root = Path(__file__).resolve().parents[2]
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["intervention"][intervention]["language"] = "de"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    message = f"params.yaml: intervention.{intervention}.language: expected one of 'uk', 'en', got 'de'"
    with pytest.raises(ConfigError) as info:
        load_params(tmp_path / "params.yaml")
    assert str(info.value).endswith(message), str(info.value)
    main = importlib.import_module(f"blindmcq.stages.{intervention}").main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"blindmcq {intervention}: error: {message}", err
    assert not (tmp_path / "results").exists()  # stopped before any work


def test_a_truncated_assignment_is_rejected_not_read_in_part(bank: list[Item]) -> None:
    """The oracle's answers cut off at the token limit: even its complete first lines are not scored
    (the assignment is unfinished), every row says ``truncated``; a reasoning model gets its room."""
    conf = PoolConfig(delete_share=0.3, scoring="generate")
    groups = build_groups(bank[:20], conf)
    oracle = Oracle(groups)
    rooms: list[int] = []

    class Cut:
        name = "cut"

        def complete(self, request: ModelRequest) -> ModelResponse:
            rooms.append(int(request.max_tokens))
            full = oracle.complete(request).text
            return ModelResponse(text=full[: len(full) // 2], meta={"stop_reason": "max_tokens"})

    model = StandInModel(name="r", backend="oracle", reasons_by_default=True, max_tokens=4096)
    rows = run_answerpool(bank[:20], conf, model_cfg=model, backend=Cut())
    assert set(rows["parse_status"]) == {"truncated"} and rows["picked_entry"].isna().all()
    assert set(rooms) == {4096}
