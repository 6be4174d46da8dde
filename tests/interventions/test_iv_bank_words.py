"""The rewrite and AnswerPool prompts name the bank from the dataset config: the default bank's requests
are the ones rendered before the words moved there (sha256, byte for byte); a bank without a
description is never called a legal exam; a geography bank is named by its own words."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from blindmcq.datasets.items import Item
from blindmcq.params import load_params
from blindmcq.tasks import answerpool as ap
from blindmcq.tasks import rewrite as rw

ROOT = Path(__file__).resolve().parents[2]
# sha256 of every request's user text, rendered by the templates that carried the legal words inline
GOLDEN = json.loads((ROOT / "tests/fixtures/prompts/interventions.sha256.json").read_text(encoding="utf-8"))
DEFAULT = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["dataset"]["description"]
LEGAL = ("юридичн", "legal", "law ", "кваліфікаційн")

ITEMS = [
    Item(id=f"dmsu-customs-code-{k}", source="dmsu", bank="customs-code", number=k,
         question=f"Питання {k}: хто вчиняє дію {k}?",
         options=(f"Особа {k}", f"Орган влади номер {k}", f"Суд {k} інстанції", f"Ніхто з {k}"), key=k % 4)
    for k in range(1, 11)
]  # fmt: skip


def _rendered(description: object) -> dict[str, str]:
    """Every rewrite and AnswerPool request text of ITEMS, by the key the golden file uses."""
    out = {}
    for lang in ("uk", "en"):
        conf = rw.RewriteConfig(rewriter="model", language=lang, model={"name": "m", "backend": "longest"})
        for (item_id, j), request in rw.rewrite_requests(ITEMS, conf, "m", description=description):
            out[f"rewrite/{lang}/{item_id}/{j}"] = request.user
        for style in ("numbers", "letters"):
            pool = ap.PoolConfig(language=lang, entry_labels=style, group_size=5)
            for group in ap.build_groups(ITEMS, pool):
                for condition in ("blind", "full"):
                    for slot in (None, 0, 2):
                        key = f"answerpool/{lang}/{style}/{group.group_id}/{condition}/{slot}"
                        out[key] = ap.render_prompt(group, condition, lang, slot, style, description)
    return out


def test_the_default_banks_intervention_prompts_are_unchanged_byte_for_byte() -> None:
    rendered = _rendered(DEFAULT)
    assert {k: hashlib.sha256(v.encode()).hexdigest() for k, v in rendered.items()} == GOLDEN
    assert "тестове запитання юридичного іспиту" in rendered["rewrite/uk/dmsu-customs-code-1/0"]
    # the pipeline's wire requests: the model rewriter's provenance hash is the old template's
    assert rw.prompt_sha256(rw.rewrite_template("uk", DEFAULT)) == rw.prompt_sha256(
        rw.PROMPTS["uk"]
        .replace("{rewrite_exam_uk}", "юридичного іспиту")
        .replace("{rewrite_terms_uk}", "юридичною термінологією")
    )


@pytest.mark.parametrize("description", [None, "ZNO geography, 2019-2023", {}])
def test_a_bank_without_a_description_is_not_called_a_legal_exam(description: object) -> None:
    for key, text in _rendered(description).items():
        shown = text.lower()
        for word in LEGAL:
            assert word not in shown, (key, word)
        assert "{" not in text and "}" not in text, key
    neutral = _rendered(None)
    rewrite_uk = neutral["rewrite/uk/dmsu-customs-code-1/0"]
    assert "тестове запитання з кількома варіантами відповіді." in rewrite_uk
    pool_en = neutral["answerpool/en/numbers/customs-code-g000/full/None"]
    assert "questions from a multiple-choice test" in pool_en


def test_a_geography_bank_is_named_by_its_own_words_everywhere() -> None:
    words = {"exam_uk": "ЗНО з географії", "exam_en": "a geography school-leaving exam",
             "rewrite_terms_uk": "географічною термінологією"}  # fmt: skip
    rendered = _rendered(words)
    rewrite_uk = rendered["rewrite/uk/dmsu-customs-code-1/0"]
    # the rewrite's own entry left out: the bank's general name (exam_uk), not the neutral words
    assert "тестове запитання ЗНО з географії." in rewrite_uk
    assert "стилем, географічною термінологією і довжиною" in rewrite_uk
    assert "a question from a geography school-leaving exam." in rendered["rewrite/en/dmsu-customs-code-1/0"]
    assert "in register, terminology and length" in rendered["rewrite/en/dmsu-customs-code-1/0"]
    blind = rendered["answerpool/uk/numbers/customs-code-g000/blind/None"]
    assert "до 5 тестових запитань ЗНО з географії. Самі запитання" in blind
    full_en = rendered["answerpool/en/letters/customs-code-g000/full/0"]
    assert "5 questions from a geography school-leaving exam and" in full_en


def test_braces_in_a_banks_words_stay_text() -> None:
    text = rw.rewrite_template("en", {"rewrite_exam_en": "the {odd} exam"})
    filled = text.format(question="q", key="k", distractor="d", key_chars=1)
    assert "a question from the {odd} exam." in filled


def test_the_stages_pass_the_datasets_description(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The rewrite and AnswerPool stages hand params.yaml's dataset description to the prompts."""
    import blindmcq.stages.answerpool as pool_stage
    import blindmcq.stages.rewrite as rewrite_stage

    seen = {}

    class Stop(Exception):
        pass

    def fake_rewrite(items, conf, **kw):
        seen["rewrite"] = kw.get("description")
        raise Stop

    def fake_pool(items, conf, **kw):
        seen["answerpool"] = kw.get("description")
        raise Stop

    monkeypatch.setattr(rewrite_stage, "rewrite_items", fake_rewrite)
    monkeypatch.setattr(pool_stage, "run_answerpool", fake_pool)
    monkeypatch.setattr(rewrite_stage, "stage_items", lambda *a, **k: ITEMS)
    monkeypatch.setattr(pool_stage, "stage_items", lambda *a, **k: ITEMS)
    config = load_params(ROOT / "params.yaml")
    for stage in (rewrite_stage.rewrite_stage, pool_stage.answerpool_stage):
        with pytest.raises(Stop):
            stage(config, tmp_path / "out")
    assert seen == {"rewrite": DEFAULT, "answerpool": DEFAULT}
