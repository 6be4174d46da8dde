"""The lexical-search model answers as Table 2's lexical row, in every order (tie-breaks included)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.registry import make_backend
from blindmcq.config.files import load_group, load_label_schemes, load_model_file
from blindmcq.config.schema import LexicalModel, model_config
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError
from blindmcq.statutes.bm25 import BM25Index
from blindmcq.statutes.lexical import lexical_search, summarise
from blindmcq.statutes.text import Analyzer, TextConfig
from blindmcq.tasks.probe import EngineSettings, PresentationSetup, run_probe

PLAIN = TextConfig(lemmatize=False)
DOCS = [
    ("ua-law-1", "art1", "Стаття 1. Митна справа", "Митний кодекс регулює митну справу."),
    ("ua-law-2", "art7", "Стаття 7. Служба", "Державна служба це професійна діяльність службовців."),
    ("ua-law-3", "art3", "Стаття 3. Корупція", "Корупція заборонена законом."),
    ("ua-law-4", "art8", "Стаття 8. Верховенство", "Конституція має найвищу юридичну силу."),
]


def _item(n: int, options: list[str], key: int) -> Item:
    return Item(f"t-b-{n}", "t", "b", n, "питання?", tuple(options), key, "ok")  # type: ignore[arg-type]


# keys in every slot; items 3-6 are all-zero ties (broken at random per item), item 7 a two-way tie
ITEMS = [
    _item(1, ["професійна діяльність службовців", "невідомі слова", "зовсім інше", "ще щось"], 0),
    _item(2, ["нічого", "корупція заборонена", "митний", "інше"], 1),
    _item(3, ["ааа", "ббб", "ввв", "ггг"], 2),
    _item(4, ["ааа", "ббб", "ввв", "ггг"], 3),
    _item(5, ["ааа", "ббб", "ввв"], 0),
    _item(6, ["ааа", "ббб", "ввв", "ггг"], 1),
    _item(7, ["митний кодекс", "ааа", "митний кодекс ", "ввв"], 2),
    _item(8, ["ааа", "Конституція юридична сила", "ввв", "ггг"], 3),
]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    analyzer = Analyzer(PLAIN)
    provisions = pd.DataFrame(
        [
            {"act": a, "act_title": a.upper(), "status": "in_force", "issued": "2020-01-01", "ref": r}
            | {"title": t, "text": x}
            for a, r, t, x in DOCS
        ]
    )
    docs = [analyzer(f"{t}\n{x}") for _, _, t, x in DOCS]
    out = tmp_path_factory.mktemp("lexical") / "index"
    BM25Index.build(docs, provisions, meta={"text": PLAIN.to_json()}).save(out)
    return out


def model_cfg(index_dir: Path, **extra: object) -> LexicalModel:
    return model_config({**load_model_file("lexical"), "index": str(index_dir), **extra})


def probe(cfg: LexicalModel, tmp_path: Path) -> pd.DataFrame:
    return run_probe(
        ITEMS, model_cfg=cfg, setup=PresentationSetup(
            prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
            reasoning=load_group("reasoning", "direct"),
            condition=replace(load_group("condition", "default"), forced=True),
            protocol=load_group("protocol", "sl"), schemes=load_label_schemes(),
        ),
        engine=EngineSettings(tmp_path / "cache.sqlite", progress=False),
    )  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_blind_accuracy_equals_table2_lexical_in_every_order(
    index_dir: Path, tmp_path: Path, seed: int
) -> None:
    index, analyzer = BM25Index.load(index_dir), Analyzer(PLAIN)
    table2 = lexical_search(ITEMS, index, analyzer, seed=seed).set_index("item_id")
    assert table2["tie"].sum() >= 4  # the tie-break is exercised
    frame = probe(model_cfg(index_dir, seed=seed), tmp_path)
    blind = frame[frame["condition"] == "blind"]
    assert set(blind["order_id"]) >= {"rot0", "rot1", "rev0", "forced0"}
    # the same option in every order (and with the key forced into each slot), and it is Table 2's pick
    per_item = blind.groupby("item_id")["picked_option"].agg(["min", "max"])
    assert (per_item["min"] == per_item["max"]).all()
    assert per_item["min"].astype(int).to_dict() == table2["picked_option"].astype(int).to_dict()
    accuracy = blind.groupby("item_id")["correct"].mean().mean()
    assert accuracy == pytest.approx(summarise(table2.reset_index()).accuracy)
    full = frame[frame["condition"] == "full"].set_index("item_id")["picked_option"].astype(int)
    assert full.to_dict() == table2["picked_option"].astype(int).to_dict()


def test_declares_abilities_and_keys_on_the_index(index_dir: Path, tmp_path: Path) -> None:
    backend = make_backend(model_cfg(index_dir))
    assert backend.abilities.needs_option_texts and not backend.abilities.score_labels
    request = ModelRequest("lexical", None, "q", choices=("A", "B"), extra={"option_texts": ["x", "y"]})
    wire = backend.wire_request(request)
    assert wire["option_texts"] == ["x", "y"] and wire["index"] == backend.index_id
    other = tmp_path / "other"
    other.mkdir()
    (other / "meta.json").write_text('{"format": "x"}', encoding="utf-8")
    assert make_backend(model_cfg(other)).wire_request(request) != wire  # another index, another key


def test_bad_config_names_the_key(index_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.index"):
        make_backend(model_cfg(tmp_path / "nowhere")).wire_request(ModelRequest("lexical", None, "q"))
    with pytest.raises(ConfigError, match="tie_break"):
        make_backend(model_cfg(index_dir, tie_break="last"))
