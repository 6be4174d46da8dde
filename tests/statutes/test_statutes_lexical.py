from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.datasets.items import Item, write_items
from blindmcq.errors import InputError
from blindmcq.statutes.bm25 import BM25Index
from blindmcq.statutes.lexical import lexical_baseline, lexical_search, summarise
from blindmcq.statutes.text import Analyzer, TextConfig

PLAIN = TextConfig(lemmatize=False)
DOCS = [
    ("ua-law-1", "art1", "Стаття 1. Митна справа", "Митний кодекс регулює митну справу."),
    ("ua-law-2", "art7", "Стаття 7. Служба", "Вступ.\nДержавна служба це професійна діяльність службовців."),
    ("ua-law-3", "art3", "Стаття 3. Корупція", "Корупція заборонена законом."),
    ("ua-law-4", "art8", "Стаття 8. Верховенство", "Конституція має найвищу юридичну силу."),
]


def _item(n: int, options: list[str], key: int | None, status: str = "ok") -> Item:
    return Item(f"t-b-{n}", "t", "b", n, "питання?", tuple(options), key, status)  # type: ignore[arg-type]


ITEMS = [
    _item(1, ["професійна діяльність службовців", "невідомі слова", "зовсім інше", "ще щось"], 0),
    _item(2, ["корупція заборонена", "Корупція   заборонена!", "митний", "нічого"], 1),
    _item(3, ["ааа", "ббб"], 1),
    _item(4, ["митний кодекс", "ніщо"], None, status="excluded"),
    _item(5, [], None, status="malformed"),
]


@pytest.fixture(scope="module")
def tiny() -> tuple[BM25Index, Analyzer]:
    analyzer = Analyzer(PLAIN)
    provisions = pd.DataFrame(
        [
            {"act": a, "act_title": a.upper(), "status": "in_force", "issued": "2020-01-01", "ref": r}
            | {"title": t, "text": x}
            for a, r, t, x in DOCS
        ]
    )
    docs = [analyzer(f"{t}\n{x}") for _, _, t, x in DOCS]
    return BM25Index.build(docs, provisions, meta={"text": PLAIN.to_json()}), analyzer


def test_pick_and_matched_provision(tiny: tuple[BM25Index, Analyzer]) -> None:
    picks = lexical_search(ITEMS, *tiny, seed=0).set_index("item_id")
    first = picks.loc["t-b-1"]
    assert first["picked_option"] == 0 and first["correct"] and not first["tie"]
    assert first["option_scores"][0] > 0 and first["option_scores"][1:] == [0.0, 0.0, 0.0]
    assert (first["match_act"], first["match_ref"], first["match_issued"]) == (
        "ua-law-2",
        "art7",
        "2020-01-01",
    )
    assert first["match_snippet"] == "Державна служба це професійна діяльність службовців."
    assert first["option_match_refs"] == ["ua-law-2 art7", None, None, None]
    assert first["match_score"] == first["option_scores"][0]


def test_ties_are_recorded_and_broken_as_configured(tiny: tuple[BM25Index, Analyzer]) -> None:
    first = lexical_search(ITEMS, *tiny, tie_break="first", seed=0).set_index("item_id")
    tied = first.loc["t-b-2"]
    assert (
        tied["tie"] and tied["tied_options"] == [0, 1] and tied["picked_option"] == 0 and not tied["correct"]
    )
    assert tied["match_ref"] == "art3"
    picks = {
        int(lexical_search(ITEMS, *tiny, seed=s).set_index("item_id").at["t-b-2", "picked_option"])
        for s in range(12)
    }
    assert picks == {0, 1}  # random tie-breaking reaches both tied options, and only them
    again = lexical_search(ITEMS, *tiny, seed=3)
    pd.testing.assert_frame_equal(again, lexical_search(ITEMS, *tiny, seed=3))


def test_options_without_corpus_terms(tiny: tuple[BM25Index, Analyzer]) -> None:
    row = lexical_search(ITEMS, *tiny, tie_break="first", seed=0).set_index("item_id").loc["t-b-3"]
    assert row["tie"] and row["tied_options"] == [0, 1] and row["option_scores"] == [0.0, 0.0]
    assert pd.isna(row["match_act"]) and pd.isna(row["match_snippet"])
    assert row["option_match_refs"] == [None, None]


def test_summary_counts_usable_items_with_wilson_interval(tiny: tuple[BM25Index, Analyzer]) -> None:
    picks = lexical_search(ITEMS, *tiny, tie_break="first", seed=0)
    assert list(picks["usable"]) == [True, True, True, False, False]
    assert pd.isna(picks.at[4, "picked_option"]) and pd.isna(picks.at[4, "correct"])
    s = summarise(picks)
    assert (s.n, s.correct, s.ties, s.no_match) == (3, 1, 2, 1)
    assert s.accuracy == pytest.approx(1 / 3) and s.chance == pytest.approx((0.25 + 0.25 + 0.5) / 3)
    assert s.expected_accuracy == pytest.approx((1 + 0.5 + 0.5) / 3)
    n, p, z = 3, 1 / 3, 1.959963984540054  # Wilson score interval, written out
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (s.ci_low, s.ci_high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    with pytest.raises(InputError, match="no usable items"):
        summarise(picks[~picks["usable"]])


def test_lexical_baseline_from_files(tiny: tuple[BM25Index, Analyzer], tmp_path: Path) -> None:
    index, _ = tiny
    index.save(tmp_path / "index")
    write_items(tmp_path / "items.jsonl", ITEMS)
    picks, summary = lexical_baseline(
        tmp_path / "items.jsonl", tmp_path / "index", tmp_path / "out/lexical.parquet", seed=0
    )
    stored = pd.read_parquet(tmp_path / "out/lexical.parquet")
    assert list(stored["item_id"]) == [i.id for i in ITEMS]
    pd.testing.assert_series_equal(stored["picked_option"], picks["picked_option"])
    pd.testing.assert_series_equal(stored["correct"], picks["correct"])
    assert summary == summarise(picks) and summary.n == 3
