"""How the prompts name the bank: the dataset's ``description`` fills each phrasing's bank placeholders;
a bank without one gets the phrasing's neutral words, and the default run's prompts stay the paper's."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from blindmcq.config.files import CONF_DIR, load_group
from blindmcq.config.schema import validate
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError
from blindmcq.tasks.presentations import for_bank, present
from blindmcq.tasks.probe import PresentationSetup

ROOT = Path(__file__).resolve().parents[1]
PHRASINGS = sorted(p.stem for p in (CONF_DIR / "prompt").glob("*.yaml"))
# sha256 of system + NUL + user for every shipped phrasing x scheme x reasoning x item x condition, as
# rendered before the bank's words moved into the dataset config: the paper's prompts, byte for byte
GOLDEN = json.loads((ROOT / "tests/fixtures/prompts/paper_phrasings.sha256.json").read_text())
DEFAULT_DATASET = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["dataset"]

ITEMS = [
    Item(id="dmsu-customs-code-7", source="dmsu", bank="customs-code", number=7,
         question="Які дії має право самостійно вчиняти фізична особа, яка НЕ досягла 14 років?",
         options=("Здійснювати майнові права", "Розпоряджатися вкладом", "Вчиняти дрібні правочини",
                  "Вчиняти\nрізні правочини"), key=2),
    Item(id="dmsu-constitution-3", source="dmsu", bank="constitution", number=3,
         question="Хто є носієм суверенітету?", options=("Народ", "Президент", "Парламент"), key=0),
]  # fmt: skip


def _render(prompt, item: Item, condition: str, labels: str = "latin", reasoning: str = "direct"):
    order = (*range(1, item.n_options), 0)
    return present(
        item, condition=condition, order_id="rot1", order=order, prompt=prompt,
        labels=load_group("labels", labels), reasoning=load_group("reasoning", reasoning),
        protocol_cfg=load_group("protocol", "sl"),
    )  # fmt: skip


def test_the_default_run_shows_the_papers_prompts_byte_for_byte() -> None:
    rendered = {}
    for name in PHRASINGS:
        prompt = for_bank(load_group("prompt", name), DEFAULT_DATASET["description"])
        for labels in ("latin", "cyrillic", "numerals"):
            for reasoning in ("direct", "step_by_step"):
                for item in ITEMS:
                    for condition in ("blind", "full"):
                        p = _render(prompt, item, condition, labels, reasoning)
                        text = f"{p.system}\x00{p.user}".encode()
                        key = f"{name}/{labels}/{reasoning}/{item.id}/{condition}"
                        rendered[key] = hashlib.sha256(text).hexdigest()
    assert rendered == GOLDEN
    words = DEFAULT_DATASET["description"]
    original = _render(for_bank(load_group("prompt", "original"), words), ITEMS[0], "blind")
    assert original.user.startswith(
        "Нижче наведено варіанти відповіді на тестове запитання юридичного кваліфікаційного іспиту. "
    )


def test_the_pipeline_names_the_bank_from_params_dataset() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    named = PresentationSetup.from_params(validate(params)).prompt
    assert named.bank == {"exam_uk": "юридичного кваліфікаційного іспиту"}
    params["dataset"] = {k: v for k, v in params["dataset"].items() if k != "description"}
    neutral = PresentationSetup.from_params(validate(params)).prompt
    assert neutral.bank == {"exam_uk": "з кількома варіантами відповіді"}


@pytest.mark.parametrize("name", PHRASINGS)
def test_a_bank_without_a_description_is_not_called_a_legal_exam(name: str) -> None:
    for description in (None, "ZNO geography, 2019-2023", {}):
        prompt = for_bank(load_group("prompt", name), description)
        for condition in ("blind", "full"):
            p = _render(prompt, ITEMS[0], condition)
            shown = f"{p.system or ''}\n{p.user}".lower()
            for word in ("юридичн", "legal", "українського права", "суддя", "кваліфікаційн"):
                assert word not in shown, (name, condition, word)
            assert "{" not in shown


def test_a_geography_bank_is_named_by_its_own_words() -> None:
    words = {"exam_uk": "ЗНО з географії", "exam_en": "a geography school-leaving exam",
             "question_uk": "запитання з географії"}  # fmt: skip
    users = {n: _render(for_bank(load_group("prompt", n), words), ITEMS[0], "blind").user for n in PHRASINGS}
    assert "на тестове запитання ЗНО з географії. Саме" in users["original"]
    assert "a question from a geography school-leaving exam." in users["english"]
    assert "на запитання з географії." in users["no_exam"]
    # not given for this bank: the neutral words, never another bank's
    assert "тестове запитання з кількома варіантами відповіді" in users["no_domain"]


def test_a_placeholder_the_phrasing_does_not_declare_is_named() -> None:
    prompt = replace(load_group("prompt", "original"), bank={})
    with pytest.raises(ConfigError, match=r"prompt\.original\.blind.*exam_uk"):
        _render(prompt, ITEMS[0], "blind")
    clash = replace(load_group("prompt", "original"), bank={"exam_uk": "x", "options": "y"})
    with pytest.raises(ConfigError, match=r"prompt\.original\.bank\.options"):
        _render(clash, ITEMS[0], "blind")


def test_export_names_the_bank_from_the_dataset_config(tmp_path: Path) -> None:
    from blindmcq.cli import export as export_cli

    bank = tmp_path / "geo.csv"
    bank.write_text("question,A,B,C,D,answer\nCapital of France?,Paris,Rome,Berlin,Madrid,A\n"
                    "Largest ocean?,Atlantic,Pacific,Indian,Arctic,B\n", encoding="utf-8")  # fmt: skip
    neutral, legal = tmp_path / "neutral", tmp_path / "legal"
    assert export_cli.main(["lm-eval", str(bank), "--out", str(neutral), "--sample", "all"]) == 0
    assert (
        export_cli.main(
            ["lm-eval", str(bank), "--out", str(legal), "--sample", "all", "--dataset", "customs-default"]
        )
        == 0
    )
    shown = (neutral / "documents.jsonl").read_text(encoding="utf-8")
    assert "юридичн" not in shown and "тестове запитання з кількома варіантами відповіді" in shown
    assert "тестове запитання юридичного кваліфікаційного іспиту" in (legal / "documents.jsonl").read_text()
    manifest = json.loads((legal / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["bank_words"] == {"exam_uk": "юридичного кваліфікаційного іспиту"}


def test_the_banks_wording_changes_no_corpus_fingerprint() -> None:
    from blindmcq.datasets.fingerprint import dataset_fingerprint

    plain = {k: v for k, v in DEFAULT_DATASET.items() if k not in ("subject", "description")}
    assert dataset_fingerprint(DEFAULT_DATASET) == dataset_fingerprint(plain)
    assert dataset_fingerprint({**plain, "source": "other"}) != dataset_fingerprint(plain)
