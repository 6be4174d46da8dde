from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from blindmcq.config.files import CONF_DIR, load_group
from blindmcq.config.schema import Labels
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError, InputError
from blindmcq.labels import label_strings
from blindmcq.tasks.presentations import (
    build_presentations,
    for_bank,
    forced_order,
    orders,
    present,
    select_orders,
    to_request,
)

SL = load_group("protocol", "sl")
PHRASINGS = sorted(p.stem for p in (CONF_DIR / "prompt").glob("*.yaml"))
SL_LABELS = ("latin", "cyrillic", "numerals")
REASONING = ("direct", "step_by_step", "thinking")

ITEM = Item(
    id="vkks-2024-commercial-2237",
    source="vkks",
    bank="2024-commercial",
    number=2237,
    question="Які дії має право самостійно вчиняти фізична особа, яка НЕ досягла 14 років?",
    options=(
        "Здійснювати майнові права на результати інтелектуальної діяльності",
        "Розпоряджатися банківським вкладом, унесеним нею на своє ім'я",
        "Вчиняти дрібні побутові правочини",
        "Вчиняти різні\nпобутові правочини",
    ),
    key=2,
)


def make_item(n: int, key: int = 0, number: int = 1) -> Item:
    return Item(
        id=f"t-b-{number}",
        source="t",
        bank="b",
        number=number,
        question=f"Питання {number}?",
        options=tuple(f"варіант {{{i}}} {number}" for i in range(n)),  # braces must survive formatting
        key=key,
    )


def cfg(prompt: str = "original", labels: str = "cyrillic", reasoning: str = "direct") -> dict:
    return {
        "prompt": load_group("prompt", prompt),
        "labels": load_group("labels", labels),
        "reasoning": load_group("reasoning", reasoning),
    }


def digest(presentations) -> str:
    blob = json.dumps([asdict(p) for p in presentations], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("n", range(2, 11))
def test_every_option_in_every_slot_exactly_twice(n: int) -> None:
    got = orders(n)
    assert [i for i, _ in got] == [f"rot{k}" for k in range(n)] + [f"rev{k}" for k in range(n)]
    for _, order in got:
        assert sorted(order) == list(range(n))
    counts = Counter((slot, option) for _, order in got for slot, option in enumerate(order))
    assert set(counts) == {(s, o) for s in range(n) for o in range(n)}
    assert set(counts.values()) == {2}


def test_orders_for_four_options() -> None:
    got = dict(orders(4))
    assert got["rot0"] == (0, 1, 2, 3)  # the published order
    assert got["rot1"] == (1, 2, 3, 0)
    assert got["rev0"] == (3, 2, 1, 0)
    assert got["rev1"] == (2, 1, 0, 3)
    assert len(got) == 8


@pytest.mark.parametrize("n", [2, 4, 5, 10])
def test_forced_placement(n: int) -> None:
    for key in range(n):
        for slot in range(n):
            order_id, order = forced_order(n, key, slot)
            assert order_id == f"forced{slot}"
            assert order[slot] == key
            assert [o for o in order if o != key] == [o for o in range(n) if o != key]


def test_select_orders_rejects_unknown_ids() -> None:
    assert [i for i, _ in select_orders(4, ["rev2", "rot0"], key="k")] == ["rev2", "rot0"]
    with pytest.raises(ConfigError, match="full_orders"):
        select_orders(4, ["rot4"], key="full_orders")


def test_default_probe_shape_and_keys() -> None:
    ps = build_presentations(
        [ITEM], conditions=["blind", "full"], blind_orders="all", full_orders=["rot0"], forced=True, **cfg()
    )
    assert [p.order_id for p in ps] == [
        *(f"rot{k}" for k in range(4)),
        *(f"rev{k}" for k in range(4)),
        *(f"forced{s}" for s in range(4)),
        "rot0",
    ]
    for p in ps:
        assert p.option_texts[p.key_slot] == ITEM.options[ITEM.key]
        assert p.option_texts == tuple(ITEM.options[i] for i in p.order)
    forced = [p for p in ps if p.forced_slot is not None]
    assert [p.key_slot for p in forced] == [0, 1, 2, 3] == [p.forced_slot for p in forced]
    assert {p.condition for p in forced} == {"blind"}


def test_blind_hides_the_question_and_full_shows_it() -> None:
    blind = present(ITEM, condition="blind", order_id="rev0", order=(3, 2, 1, 0), **cfg())
    full = present(ITEM, condition="full", order_id="rot0", order=(0, 1, 2, 3), **cfg())
    assert ITEM.question not in blind.user and ITEM.question in full.user
    lines = [line for line in blind.user.splitlines() if line[:2] in {"А)", "Б)", "В)", "Г)"}]
    # The option text keeps its words but loses the PDF line break.
    assert lines[0] == "А) Вчиняти різні побутові правочини"
    assert lines[2] == "В) Розпоряджатися банківським вкладом, унесеним нею на своє ім'я"
    assert blind.key_slot == 1 and blind.label_strings == ("А", "Б", "В", "Г")
    assert "А, Б, В або Г" in blind.user and "літерою" in blind.user


@pytest.mark.parametrize("phrasing", PHRASINGS)
@pytest.mark.parametrize("labels", SL_LABELS)
@pytest.mark.parametrize("reasoning", REASONING)
def test_every_phrasing_renders_with_every_scheme(phrasing: str, labels: str, reasoning: str) -> None:
    c = cfg(phrasing, labels, reasoning)
    assert c["prompt"].name == phrasing
    for condition in ("blind", "full"):
        p = present(make_item(5, key=3), condition=condition, order_id="rot1", order=(1, 2, 3, 4, 0), **c)
        shown = label_strings(c["labels"], 5)
        for slot, label in enumerate(shown):
            assert f"{label}) варіант {{{p.order[slot]}}} 1" in p.user
        assert "{" + "label_list}" not in p.user and "{options}" not in p.user
        assert ("Питання 1?" in p.user) == (condition == "full")
        assert f"{shown[-2]} {c['prompt'].or_word} {shown[-1]}" in p.user
        if reasoning == "step_by_step":
            assert ("Відповідь: X" if c["prompt"].language == "uk" else "Answer: X") in p.user


def test_phrasings_differ_as_the_paper_describes() -> None:
    """The paper's seven phrasings are shipped and differ as it says; any phrasing added beside them (one
    file in conf/prompt) must differ from every other in what the model is shown."""
    words = load_group("dataset", "customs-default").description  # the paper's bank, as it names it

    def paper(name: str) -> dict:
        return {**cfg(name), "prompt": for_bank(load_group("prompt", name), words)}

    shown = {
        name: present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **paper(name))
        for name in PHRASINGS
    }
    users = {name: p.user for name, p in shown.items()}
    assert set(PHRASINGS) >= {"original", "minimal", "no_domain", "english", "guessing", "no_exam", "expert"}
    assert "юридичн" in users["original"] and "юридичн" not in users["no_domain"]
    assert "іспит" in users["original"] and "іспит" not in users["no_exam"] and "юридичн" in users["no_exam"]
    assert "вгада" in users["guessing"] and "вгада" not in users["original"]
    assert "Answer with only the letter" in users["english"]
    assert users["minimal"].startswith("А) ")
    expert = present(ITEM, condition="full", order_id="rot0", order=(0, 1, 2, 3), **paper("expert"))
    assert expert.system and "експерт" in expert.system
    assert users["expert"] == users["original"]  # expert differs from original only in its system prompt
    assert len({(p.system, p.user) for p in shown.values()}) == len(shown), "two phrasings show the same"


def test_matched_and_dashed_uses_dashes_and_a_sentence_answer() -> None:
    c = cfg(labels="dash")
    p = present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), protocol="md", **c)
    assert p.label_strings == ("-",) * 4
    assert "- Вчиняти дрібні побутові правочини" in p.user
    assert "реченням" in p.user and "літерою" not in p.user
    custom = present(
        make_item(10),
        condition="full",
        order_id="rev3",
        order=dict(orders(10))["rev3"],
        protocol="md",
        protocol_cfg=replace(
            load_group("protocol", "md"), answer_instruction={"uk": "Напишіть відповідь реченням."}
        ),
        **cfg("original", "dash", "step_by_step"),
    )
    assert custom.user.endswith("Міркуйте крок за кроком. Напишіть відповідь реченням.")
    with pytest.raises(ConfigError, match="labels"):
        present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), protocol="md", **cfg())
    with pytest.raises(ConfigError, match="labels"):
        present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **c)


def test_same_config_gives_byte_identical_prompts() -> None:
    items = [make_item(n, key=n - 1, number=n) for n in (2, 4, 4, 5, 10)]
    kwargs = {"conditions": ["blind", "full"], "blind_orders": "all", "full_orders": "all", "forced": True}
    first = digest(build_presentations(items, **kwargs, **cfg("english", "latin", "step_by_step")))
    again = digest(build_presentations(items, **kwargs, **cfg("english", "latin", "step_by_step")))
    other = digest(build_presentations(items, **kwargs, **cfg("english", "numerals", "step_by_step")))
    assert first == again != other


def test_prompts_do_not_depend_on_the_interpreter_hash_seed(tmp_path: Path) -> None:
    script = (
        "import hashlib,json;from dataclasses import asdict;"
        "from blindmcq.datasets.items import Item;"
        "from blindmcq.tasks.presentations import build_presentations;"
        "from blindmcq.config.files import load_group;"
        "it=[Item(id=f'x-b-{n}',source='x',bank='b',number=n,question='Q?',"
        "options=tuple(f'o{i}' for i in range(n)),key=0) for n in (3,4)];"
        "ps=build_presentations(it,conditions=['blind','full'],blind_orders='all',full_orders='all',forced=True,"
        "prompt=load_group('prompt','guessing'),labels=load_group('labels','cyrillic'),"
        "reasoning=load_group('reasoning','direct'));"
        "print(hashlib.sha256(json.dumps([asdict(p) for p in ps],ensure_ascii=False).encode()).hexdigest())"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    out = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": src},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(out) == 1 and len(next(iter(out))) == 64


def test_bad_config_names_the_key() -> None:
    c = cfg()
    leaky = replace(c["prompt"], blind="{question}\n{options}\n{answer_instruction}")
    with pytest.raises(ConfigError, match=r"prompt\.original\.blind"):
        present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **{**c, "prompt": leaky})
    typo = replace(c["prompt"], full="{question}\n{option}\n{answer_instruction}")
    with pytest.raises(ConfigError, match="option"):
        present(ITEM, condition="full", order_id="rot0", order=(0, 1, 2, 3), **{**c, "prompt": typo})
    short = Labels(name="short", symbols=["A", "B"], noun={"uk": "літерою"})
    with pytest.raises(ConfigError, match=r"labels\.short\.symbols"):
        present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **{**c, "labels": short})
    with pytest.raises(InputError, match="vkks-2024-commercial-2237"):
        present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 1, 3), **c)
    with pytest.raises(ConfigError, match="prompt"):
        load_group("prompt", "does-not-exist")


def test_forced_needs_a_key() -> None:
    keyless = Item(id="t-b-9", source="t", bank="b", number=9, question="Q", options=("a", "b"), key=None)
    with pytest.raises(InputError, match="t-b-9"):
        build_presentations([keyless], conditions=["blind"], blind_orders="all", forced=True, **cfg())


def test_label_schemes_cover_ten_options() -> None:
    for name in ("latin", "cyrillic", "numerals", "dash"):
        labels = load_group("labels", name)
        assert labels.name == name
        shown = label_strings(labels, 10)
        assert len(shown) == 10
        assert len(set(shown)) == (1 if name == "dash" else 10)
    assert label_strings(load_group("labels", "cyrillic"), 6) == ("А", "Б", "В", "Г", "Д", "Е")  # no Ґ
    assert label_strings(load_group("labels", "numerals"), 10)[-1] == "10"


@pytest.mark.parametrize("n", [27, 32, 64, 703, 800])
def test_label_schemes_extend_past_their_symbols(n: int) -> None:
    """Each shipped scheme declares how it goes on past its listed symbols; the labels stay distinct,
    begin with the listed ones, and (letters) follow spreadsheet columns: Z, AA, AZ, BA, ZZ, AAA."""
    for name in ("latin", "cyrillic", "numerals"):
        shown = label_strings(load_group("labels", name), n)
        assert len(shown) == n and len(set(shown)) == n
        assert list(shown[:26]) == [str(s) for s in load_group("labels", name).symbols][:26]
    latin = label_strings(load_group("labels", "latin"), n)
    expected = {26: "AA", 27: "AB", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"}
    assert all(latin[i] == label for i, label in expected.items() if i < n)
    assert label_strings(load_group("labels", "numerals"), n) == tuple(str(i) for i in range(1, n + 1))
    assert label_strings(load_group("labels", "cyrillic"), max(n, 32))[31] == "АА"  # 31 listed: no Ґ, Ь
    assert label_strings(load_group("labels", "dash"), n) == ("-",) * n
    from blindmcq.analysis.tables import slot_name  # tables and figures name slots as Latin labels them

    assert [slot_name(i) for i in range(n)] == list(latin)


def test_a_scheme_that_does_not_extend_stops_naming_itself() -> None:
    stops = replace(load_group("labels", "latin"), extend="none")
    assert len(label_strings(stops, 26)) == 26
    with pytest.raises(ConfigError, match=r"labels\.latin\.symbols': 26 symbols, an item has 27 options"):
        label_strings(stops, 27)
    with pytest.raises(ConfigError, match=r"labels\.latin\.extend"):
        label_strings(replace(stops, extend="sideways"), 27)


def test_a_32_option_item_renders_and_its_answers_parse() -> None:
    from blindmcq.config.files import load_label_schemes
    from blindmcq.labels import label_symbols_by_scheme
    from blindmcq.tasks.parsing import parse_answer

    item = make_item(32, key=31)
    shown = build_presentations([item], conditions=["full"], blind_orders="all", full_orders=["rot0"],
                                forced=False, **cfg(labels="latin"))[0]  # fmt: skip
    assert shown.label_strings[-1] == "AF" and "AF) варіант {31} 1" in shown.user
    symbols = label_symbols_by_scheme(load_label_schemes(), 32)
    assert parse_answer("AF", "latin", 32, symbols=symbols).slot == 31
    assert parse_answer("Answer: (AB)", "latin", 32, symbols=symbols).slot == 27
    assert parse_answer("A", "latin", 32, symbols=symbols).slot == 0  # "A" is not read inside "AB"
    assert parse_answer("32", "numerals", 32, symbols=symbols).slot == 31


def test_to_request() -> None:
    c = cfg("original", "latin", "direct")
    p = present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **c)
    scored = to_request(p, model="gemma3-270m", temperature=None, max_tokens=1, score_labels=True)
    assert scored.choices == ("A", "B", "C", "D")
    assert scored.user == p.user + "\nВідповідь:" and scored.reasoning == "direct"
    generated = to_request(p, model="m", temperature=0.0, max_tokens=64, score_labels=False)
    assert generated.choices == () and generated.user == p.user and generated.extra == {}
    assert scored.cache_key("local") != generated.cache_key("local")
    thinking = present(
        ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **cfg(reasoning="thinking")
    )
    assert (
        thinking.user == present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), **cfg()).user
    )
    with pytest.raises(ConfigError, match="thinking"):
        to_request(thinking, model="m", temperature=None, max_tokens=4096, score_labels=False)
    req = to_request(
        thinking, model="m", temperature=None, max_tokens=4096, score_labels=False, thinking_budget=2048
    )
    assert req.reasoning == "thinking" and req.extra == {"thinking_budget_tokens": 2048}


def test_protocol_instruction_overrides_the_phrasing_under_select_and_letter() -> None:
    c = cfg("original", "numerals", "direct")
    base = present(ITEM, condition="blind", order_id="rot0", order=(0, 1, 2, 3), protocol_cfg=SL, **c)
    same = present(
        ITEM,
        condition="blind",
        order_id="rot0",
        order=(0, 1, 2, 3),
        protocol_cfg=replace(SL, answer_instruction=None),
        **c,
    )
    assert base.user == same.user and base.user.endswith("цифрою правильного варіанта: 1, 2, 3 або 4.")
    other = present(
        ITEM,
        condition="blind",
        order_id="rot0",
        order=(0, 1, 2, 3),
        protocol_cfg=replace(SL, answer_instruction={"uk": "Лише {label_noun}: {label_list}."}),
        **c,
    )
    assert other.user.endswith("Лише цифрою: 1, 2, 3 або 4.")


def test_the_text_before_the_options_is_marked_shared_and_reaches_a_scored_request() -> None:
    items = [make_item(4, key=1, number=1), make_item(5, key=0, number=2)]
    ps = build_presentations(
        items, conditions=["blind", "full"], blind_orders="all", full_orders=["rot0"], forced=False,
        **cfg("original", "latin", "direct"),
    )  # fmt: skip
    blind = {p.user[: p.shared_chars] for p in ps if p.condition == "blind"}
    assert len(blind) == 1 and all(p.shared_chars > 0 for p in ps)  # one header for every blind prompt
    for p in ps:
        head, rest = p.user[: p.shared_chars], p.user[p.shared_chars :]
        assert p.option_texts[0] not in head and rest.lstrip().startswith(p.label_strings[0])
        if p.condition == "full":
            assert " ".join(items[0 if p.n_options == 4 else 1].question.split()) in head
    scored = to_request(ps[0], model="m", temperature=0.0, max_tokens=1, score_labels=True)
    assert scored.extra["shared_prefix_chars"] == ps[0].shared_chars
    asked = to_request(ps[0], model="m", temperature=0.0, max_tokens=16, score_labels=False)
    assert "shared_prefix_chars" not in asked.extra  # an API model's request is unchanged


def test_an_instruction_with_an_unknown_placeholder_names_its_key() -> None:
    """Found by the fuzz test (random mode): a final line naming {options} raised a bare KeyError."""
    setup = cfg("original", "latin", "direct")
    setup["reasoning"] = replace(setup["reasoning"], final_line="{options}")
    with pytest.raises((ConfigError, InputError), match=r"reasoning\.direct\.final_line.*\{label_list\}"):
        build_presentations(
            [make_item(4, key=0, number=1)], conditions=["blind"], blind_orders="all", forced=False, **setup
        )
