"""Lexical search counts as a strategy only where the statutes cover the bank (statutes/coverage.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from blindmcq.auditing.audit import Mapping, lexical_strategy, run_audit
from blindmcq.datasets.items import Item
from blindmcq.statutes.corpus import read_provisions
from blindmcq.statutes.coverage import MIN_COVERAGE, statute_coverage
from blindmcq.statutes.index import build_index
from blindmcq.statutes.text import Analyzer, TextConfig

ROOT = Path(__file__).resolve().parents[2]
GEOGRAPHY = ROOT / "tests/fixtures/audit/geography_uk.csv"
PROVISIONS = [
    ("art1", "Позовна давність є строком, у межах якого особа може звернутися до суду з вимогою про захист."),
    ("art2", "Договір є домовленістю двох або більше сторін, спрямованою на встановлення цивільних прав."),
    ("art3", "Митний контроль здійснюється митними органами у пунктах пропуску через державний кордон."),
    ("art4", "Державна служба є публічною професійною діяльністю з виконання завдань держави."),
    ("art5", "Корупційне правопорушення тягне за собою кримінальну або адміністративну відповідальність."),
    ("art6", "Спадщина відкривається внаслідок смерті особи або оголошення її померлою."),
]
# the null's vocabulary: ordinary words, none of them a statute's
WORDS = (
    "хмара",
    "яблуко",
    "веселка",
    "черевик",
    "дерево",
    "пісня",
    "кавун",
    "ранок",
    "вітрило",
    "ліхтар",
    "метелик",
    "калюжа",
    "гарбуз",
    "вишня",
    "колесо",
    "сонях",
    "лелека",
    "павук",
    "зірка",
    "човен",
)


def write_statutes(path: Path) -> Path:
    rows = [
        {
            "act": "ua-test",
            "act_title": "Тестовий акт",
            "status": "in_force",
            "issued": "2020-01-01",
            "ref": ref,
            "title": f"Стаття {i}",
            "text": text,
        }
        for i, (ref, text) in enumerate(PROVISIONS)
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    text = TextConfig()
    analyzer = Analyzer(text)
    path = write_statutes(tmp_path_factory.mktemp("statutes") / "provisions.jsonl")
    return build_index(read_provisions(path), text, analyzer=analyzer), analyzer


def legal_items() -> list[Item]:
    options = [
        ("позовна давність строк", "договір сторін", "митний контроль", "спадщина особи"),
        ("державна служба", "корупційне правопорушення", "митні органи кордон", "цивільні права"),
    ]
    return [Item(f"t-law-{i}", "t", "law", i, f"Питання {i}?", options[i % 2], i % 4) for i in range(20)]


def geography_items() -> list[Item]:
    with GEOGRAPHY.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [
        Item(
            f"t-geo-{i}",
            "t",
            "geo",
            i,
            r["question"],
            (r["A"], r["B"], r["C"], r["D"]),
            "ABCD".index(r["answer"]),
        )
        for i, r in enumerate(rows)
    ]


def test_statutes_cover_a_legal_bank(index) -> None:
    c = statute_coverage(legal_items(), *index, WORDS, seed=0)
    assert c.n == 20 and c.matched == 20 and c.applies
    assert c.no_match == 0 and c.all_tied == 0
    assert c.sentence().startswith("Lexical search applies: 20 of 20 items")


def test_statutes_do_not_cover_a_geography_bank_and_its_unmatched_items_are_counted(index) -> None:
    items = geography_items()
    c = statute_coverage(items, *index, WORDS, seed=0)
    assert c.n == len(items) == 30 and c.share < MIN_COVERAGE and not c.applies
    # an item none of whose options shares a term with the statutes is all tied (at 0)
    assert c.no_match >= 25 and c.all_tied >= c.no_match
    sentence = c.sentence()
    assert sentence.startswith("Lexical search left out: the statutes do not cover this bank")
    assert (
        f"{c.no_match} match no statute at all" in sentence
        and "one-sided exact binomial on items" in sentence
    )


def test_the_audit_leaves_uncovered_lexical_search_out_of_table_2_and_the_holm_family(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("blindmcq.statutes.coverage.null_words", lambda language: WORDS)
    statutes = write_statutes(tmp_path / "provisions.jsonl")
    picks, note = lexical_strategy(geography_items(), "uk", statutes, 0)
    assert picks is None and note.startswith("Lexical search left out")
    out = tmp_path / "audit"
    result = run_audit(GEOGRAPHY, out, Mapping(), model=None, configs=None, statutes=statutes)  # type: ignore[arg-type]
    assert "lexical_search" not in set(result.summary["strategy"])
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert "table2/lexical_search" not in metrics
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "> Warning: Lexical search left out: the statutes do not cover this bank" in report
    n_content = int((~result.summary["strategy"].str.startswith("constant_")).sum())
    assert f"Holm over the {n_content} option-text strategies" in report
    # the same bank with legal options: lexical search joins the family
    picks, note = lexical_strategy(legal_items(), "uk", statutes, 0)
    assert picks is not None and note.startswith("Lexical search applies")


def test_the_baselines_stage_leaves_uncovered_lexical_search_out_of_table_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindmcq import paths
    from blindmcq.config.schema import Config
    from blindmcq.datasets.items import write_items
    from blindmcq.stages.baselines import build_baselines
    from blindmcq.statutes.index import build_statute_index

    monkeypatch.setattr("blindmcq.statutes.coverage.null_words", lambda language: WORDS)
    build_statute_index(write_statutes(tmp_path / "provisions.jsonl"), tmp_path / "index")
    for bank, items in (("geo", geography_items()), ("law", legal_items())):
        write_items(tmp_path / f"{bank}.jsonl", items)
        monkeypatch.setattr(paths, "ITEMS", tmp_path / f"{bank}.jsonl")
        monkeypatch.setattr(paths, "STATUTE_INDEX", tmp_path / "index")
        monkeypatch.setattr(paths, "BASELINES_DIR", tmp_path / bank)
        (tmp_path / bank).mkdir()
        summary = build_baselines(Config())
        facts = json.loads((tmp_path / bank / "facts.json").read_text(encoding="utf-8"))
        covered = facts["lexical"]["coverage"]["applies"]
        assert covered == (bank == "law")
        assert ("lexical_search" in set(summary["strategy"])) == covered
        if not covered:
            assert facts["lexical"]["absent"].startswith("Lexical search left out")
            assert not (tmp_path / bank / "lexical.parquet").exists()
