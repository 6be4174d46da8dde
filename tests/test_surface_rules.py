"""One definition of each surface rule: Table 2 (and the audit, through the same function) and the probed
heuristic models pick the same option with the same tie credit on every item, and an option-only
heuristic's pick does not depend on the labels, the phrasing or the display order."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from blindmcq.auditing.surface import surface_picks
from blindmcq.backends.heuristic import HeuristicBackend
from blindmcq.config.files import group_names, load_group, load_label_schemes, load_model_file
from blindmcq.config.schema import Condition, model_config
from blindmcq.datasets.items import Item, read_items
from blindmcq.surface import chars, collapse_whitespace, pick, tie_credit, tie_seed, words
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, build_jobs, run_probe

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ITEMS = ROOT / "releases" / "default" / "results" / "corpus" / "items.jsonl"


def heuristic(strategy: str) -> dict[str, Any]:
    """Table 2's strategy as the probed heuristic's config (``constant_2`` -> constant, slot 2)."""
    if strategy.startswith("constant_"):
        return {"strategy": "constant", "slot": int(strategy.removeprefix("constant_"))}
    return {"strategy": strategy}


SPACES = ("  ", "\n", "\t", "\u00a0", " \n ", "\u00a0 ", "\r\n")


@cache
def default_bank() -> tuple[Item, ...]:
    if not DEFAULT_ITEMS.is_file():
        pytest.skip(f"needs the committed default bank: {DEFAULT_ITEMS} not found")
    return tuple(read_items(DEFAULT_ITEMS))


@cache
def irregular_bank() -> tuple[Item, ...]:
    """Options whose raw length and normalised length disagree: runs of spaces, line breaks, tabs and
    no-break spaces inside and around words, many ties after normalisation, 3 to 5 options."""
    rng = random.Random(20260)
    vocabulary = "митний кодекс декларант подає декларацію орган служба закон право суд".split()
    items = []
    for n in range(1, 121):
        n_options = rng.choice((3, 4, 4, 5))
        options: list[str] = []
        while len(options) < n_options:  # distinct texts, as a bank without `duplicate_options` has
            chosen = [rng.choice(vocabulary) for _ in range(rng.randint(1, 4))]
            gaps = [rng.choice((" ", " ", *SPACES)) for _ in chosen[1:]]
            text = chosen[0] + "".join(g + w for g, w in zip(gaps, chosen[1:], strict=True))
            option = rng.choice(("", " ", "\n", "\u00a0")) + text + rng.choice(("", "  ", "\t"))
            if collapse_whitespace(option) not in map(collapse_whitespace, options):
                options.append(option)
        key = rng.randrange(n_options)
        items.append(Item(f"ws-b-{n}", "ws", "b", n, "питання?", tuple(options), key, "ok"))  # type: ignore[arg-type]
    return tuple(items)


BANKS = {"default": default_bank, "irregular": irregular_bank}


@cache
def group(name: str, option: str) -> Any:
    return load_group(name, option)


@cache
def schemes() -> Any:
    return load_label_schemes()


PUBLISHED = "published"  # the blind condition on the published order only


@cache
def setup(labels: str = "latin", prompt: str = "original", condition: str = "blind") -> PresentationSetup:
    published = Condition(conditions=["blind"], blind_orders=["rot0"], full_orders=[], forced=False)
    return PresentationSetup(
        prompt=group("prompt", prompt),
        labels=schemes()[labels],
        reasoning=group("reasoning", "direct"),
        condition=published if condition == PUBLISHED else group("condition", condition),
        protocol=group("protocol", "md" if labels == "dash" else "sl"),
        schemes=schemes(),
    )


def probed(items: Any, cfg: dict[str, Any], how: PresentationSetup) -> pd.DataFrame:
    """Each presentation's picked option (original index) and the tie credit of the tied options, from
    the heuristic backend answering the probe's own requests."""
    config = model_config({"name": "h", "backend": "heuristic", **cfg})
    backend = HeuristicBackend(config)
    keys = {item.id: item.key for item in items}
    rows = []
    for job in build_jobs(items, config, how)[1]:
        p = job.presentation
        meta = backend.complete(job.request).meta
        tied = [p.order[s] for s in meta["tied"]]
        rows.append({
            "item_id": p.item_id, "labels": p.labels, "phrasing": p.phrasing, "order_id": p.order_id,
            "condition": p.condition, "picked_option": p.order[meta["slot"]],
            "credit": tie_credit(keys[p.item_id], tied), "n_tied": len(tied),
        })  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("bank", list(BANKS))
def test_table2_and_the_probed_heuristics_pick_alike_on_every_item(bank: str) -> None:
    items = BANKS[bank]()
    table2 = surface_picks(items, seed=0).set_index(["strategy", "item_id"])
    assert len(table2.loc["longest"]) == sum(item.usable for item in items)
    assert table2.loc["most_words", "tie"].sum() > 10  # the tie break is exercised
    strategies = list(dict.fromkeys(table2.index.get_level_values("strategy")))
    assert {"longest", "shortest", "most_words", "constant_0", "constant_3"} <= set(strategies)
    for strategy in strategies:
        cfg = heuristic(strategy)
        # a constant slot applies to the items that have it (Table 2 counts only those)
        shown = [i for i in items if i.usable and cfg.get("slot", 0) < i.n_options]
        ours = probed(shown, cfg, setup(condition=PUBLISHED)).set_index("item_id")
        theirs = table2.loc[strategy]
        assert ours.index.tolist() == theirs.index.tolist(), strategy
        assert ours["picked_option"].tolist() == theirs["picked_option"].tolist(), strategy
        assert ours["credit"].tolist() == theirs["credit"].tolist(), strategy
        assert ours["n_tied"].tolist() == theirs["n_tied"].tolist(), strategy


def test_irregular_whitespace_is_measured_on_the_normalised_text() -> None:
    items = irregular_bank()
    raw_disagrees = 0
    for item in items:
        for strategy, sign in (("longest", 1), ("shortest", -1)):
            normalised = [len(collapse_whitespace(o)) for o in item.options]
            best = max(sign * v for v in normalised)
            tied = pick(strategy, item.options, seed=0).tied
            assert list(tied) == [s for s, v in enumerate(normalised) if sign * v == best]
            raw = [sign * len(o) for o in item.options]
            raw_disagrees += list(tied) != [s for s, v in enumerate(raw) if v == max(raw)]
    assert raw_disagrees > 20  # the bank would tell a raw-length rule apart
    assert chars(" a\u00a0\u00a0b\n\tc ") == 5 and words("a\u00a0b\nc\t d") == 4


def test_the_probe_records_table2s_pick_through_the_engine_and_the_parser(tmp_path: Path) -> None:
    items = [i for i in default_bank() if pick("most_words", i.options, seed=0).tie][:40]
    table2 = surface_picks(items, seed=0).set_index(["strategy", "item_id"]).loc["most_words"]
    frame = run_probe(
        items, model_config(load_model_file("most-words")), setup(labels="cyrillic", condition="blind"),
        EngineSettings(tmp_path / "cache.sqlite", progress=False),
    )  # fmt: skip
    assert (frame["parse_status"] == "ok").all()
    per_item = frame.groupby("item_id")["picked_option"].agg(["min", "max"])
    assert (per_item["min"] == per_item["max"]).all()  # the same option in every order
    assert per_item["min"].astype(int).to_dict() == table2["picked_option"].astype(int).to_dict()


def tied_items(strategy: str) -> list[Item]:
    """The items where ``strategy`` ties (elsewhere no break is drawn): the default bank's and the
    irregular bank's."""
    return [item for item in (*default_bank(), *irregular_bank()) if pick(strategy, item.options, seed=0).tie]


@pytest.mark.parametrize("strategy", ["longest", "shortest", "most_words"])
def test_labels_phrasing_and_order_leave_the_picked_option_unchanged(strategy: str) -> None:
    items = tied_items(strategy)
    assert len(items) >= 30
    table2 = surface_picks(items, seed=0).set_index(["strategy", "item_id"]).loc[strategy, "picked_option"]
    frames = [
        probed(items, heuristic(strategy), setup(labels, phrasing, PUBLISHED))
        for labels in ("latin", "cyrillic", "numerals", "dash")
        for phrasing in group_names("prompt")
    ]
    # every order, blind and full (the default condition group), under one scheme and phrasing
    frames.append(probed(items, heuristic(strategy), setup("numerals", "english", "default")))
    sweep = pd.concat(frames, ignore_index=True)
    assert set(sweep["labels"]) == {"latin", "cyrillic", "numerals", "dash"}
    assert sweep["phrasing"].nunique() == len(group_names("prompt")) >= 7
    assert sweep["order_id"].nunique() >= 8
    picked = sweep.groupby("item_id")["picked_option"].agg(["nunique", "first"])
    assert (picked["nunique"] == 1).all(), picked[picked["nunique"] > 1].index.tolist()
    assert picked["first"].to_dict() == table2.to_dict()


def test_the_tie_seed_reads_the_option_texts_alone() -> None:
    options = ["закон  про\nмитницю", "суд", "право", "орган"]
    shuffled = [options[i] for i in (2, 0, 3, 1)]
    assert tie_seed(0, "longest", options) == tie_seed(0, "longest", shuffled)
    assert tie_seed(0, "longest", options) == tie_seed(0, "longest", ["закон про митницю", *options[1:]])
    assert tie_seed(0, "longest", options) != tie_seed(1, "longest", options)
    assert tie_seed(0, "longest", options) != tie_seed(0, "shortest", options)
    assert tie_seed(0, "longest", options) != tie_seed(0, "longest", [*options[:3], "органи"])


def test_a_tie_break_is_uniform_over_items_and_never_the_first_slot_by_rule() -> None:
    # 400 items of four equally long options: each slot about a quarter of the breaks
    counts = [0, 0, 0, 0]
    for n in range(400):
        counts[pick("longest", [f"{c}{n:03d}" for c in "abcd"], seed=0).slot or 0] += 1
    assert min(counts) > 70 and max(counts) < 130, counts


def test_identical_options_go_to_the_earliest_slot_showing_the_chosen_text() -> None:
    options = ["ab", "cd", "ab", "e"]
    chosen = pick("longest", options, seed=0)
    assert chosen.tied == (0, 1, 2) and chosen.slot in (0, 1)
    moved = ["cd", "ab", "ab", "e"]
    assert pick("longest", moved, seed=0).slot == moved.index(options[chosen.slot])
