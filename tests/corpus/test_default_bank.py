"""The committed default sample: up to date with the renderer, and extracted back to its 340 source items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_support import REPO, questions_json

from blindmcq.corpus.default_bank import ACTS, SOURCE, render_default_bank
from blindmcq.corpus.extract import extract_items
from blindmcq.corpus.render import normalise

BANK_DIR = REPO / "defaults" / "bank"
FILES = [BANK_DIR / f"{SOURCE}-{bank}.pdf" for bank in ACTS.values()]


def test_committed_pdfs_are_what_the_script_renders(tmp_path: Path, shared_data: Path) -> None:
    rendered = render_default_bank(questions_json(shared_data), tmp_path)
    assert [r.path.name for r in rendered] == [f.name for f in FILES]
    for r, committed in zip(rendered, FILES, strict=True):
        assert r.path.read_bytes() == committed.read_bytes(), (
            f"{committed} is stale: run scripts/render_default_bank.py"
        )
    assert sum(f.stat().st_size for f in FILES) < 1_000_000
    assert [len(r.items) for r in rendered] == [100, 78, 62, 100]


@pytest.fixture(scope="module")
def extracted() -> tuple[list, dict]:
    return extract_items(FILES, source=SOURCE, workers=2)


def expected_items(data: Path) -> dict[str, dict]:
    acts = json.loads(questions_json(data).read_text(encoding="utf-8"))["legislation"]
    return {f"{SOURCE}-{bank}-{r['number']}": r for act, bank in ACTS.items() for r in acts[act]}


def assert_items_match(items: list, want: dict[str, dict]) -> None:
    for item in items:
        src = want[item.id]
        assert item.question == normalise(src["question"]), item.id
        assert item.options == tuple(normalise(a["text"]) for a in src["answers"]), item.id
        assert item.key == src["correct_index"], item.id
        assert (item.status, item.flags) == ("ok", ()), item.id


@pytest.mark.slow  # ~60 pages by both paths: tens of seconds on two cores
def test_default_sample_reproduces_the_sampled_source_items(extracted, samples: Path) -> None:
    items, report = extracted
    want = expected_items(samples)  # the first items of each act
    assert len(items) == 340 and report["confirmed_rate"]["all"] == 1.0
    assert_items_match([i for i in items if i.id in want], want)
    assert len({i.id for i in items} & set(want)) == len(want) == 70


@pytest.mark.slow
def test_default_sample_reproduces_the_source_items(extracted, shared_data: Path) -> None:
    items, _ = extracted
    want = expected_items(shared_data)
    assert [i.id for i in items] == list(want)
    assert_items_match(items, want)
    acts = json.loads(questions_json(shared_data).read_text(encoding="utf-8"))["legislation"]
    customs = [i for i in items if i.bank == "customs-code"]
    assert (
        sum(i.key == 0 for i in customs)
        == sum(r["correct_index"] == 0 for r in acts["Митний кодекс України"])
        == 25
    )
