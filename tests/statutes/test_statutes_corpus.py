from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from blindmcq.errors import InputError
from blindmcq.statutes.corpus import Provision, read_provisions, read_text_acts

RECORD = {
    "act": "ua-law-1-1",
    "act_title": "Закон",
    "status": "in_force",
    "issued": "2020-01-01",
    "ref": "art1",
    "title": "Стаття 1. Терміни",
    "text": "Текст.",
}


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_default_statutes_have_provenance(default_provisions: list[Provision]) -> None:
    assert len(default_provisions) == 993
    counts = {a: sum(p.act == a for p in default_provisions) for a in {p.act for p in default_provisions}}
    assert counts == {"ua-law-254-96": 127, "ua-law-889-19": 95, "ua-law-4495-17": 671, "ua-law-1700-18": 100}
    art2 = default_provisions[0]
    assert (art2.act, art2.ref, art2.issued, art2.act_title) == (
        "ua-law-254-96", "art2", "1996-06-28", "Конституція України",
    )  # fmt: skip
    assert art2.title.startswith("Стаття 2.") and "унітарною державою" in art2.document


def test_xz_and_plain_give_the_same_provisions(tmp_path: Path, default_statutes: Path) -> None:
    lines = default_statutes.read_text(encoding="utf-8").splitlines()[:20]
    plain = _write_lines(tmp_path / "p.jsonl", lines)
    packed = tmp_path / "p.jsonl.xz"
    packed.write_bytes(lzma.compress(plain.read_bytes()))
    assert read_provisions(packed) == read_provisions(plain)
    assert len(read_provisions(plain)) == 20


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("", "empty line"),
        ("   ", "empty line"),
        ('{"act": "x", ', "malformed JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({k: v for k, v in RECORD.items() if k != "text"}), "missing field(s) text"),
        (json.dumps(RECORD | {"issued": None}), "issued must be strings"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, bad: str, message: str) -> None:
    good = json.dumps(RECORD, ensure_ascii=False)
    path = _write_lines(tmp_path / "prov.jsonl", [good, good, bad, good])
    with pytest.raises(InputError, match="line 3") as err:
        read_provisions(path)
    assert err.value.line == 3 and err.value.file == str(path)
    assert message in str(err.value)


def test_missing_file_and_missing_act(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_provisions(tmp_path / "none.jsonl")
    path = _write_lines(tmp_path / "p.jsonl", [json.dumps(RECORD)])
    with pytest.raises(InputError, match="ua-law-9-9"):
        read_provisions(path, {"ua-law-1-1", "ua-law-9-9"})


def test_text_acts_folder(tmp_path: Path) -> None:
    (tmp_path / "ua-law-7-7.txt").write_text(
        "Закон України «Про приклад»\nissued: 2021-03-04\nЦей Закон визначає приклад.\n\n"
        "Стаття 1. Терміни\nУ цьому Законі терміни вживаються так.\n"
        "Стаття 1-1. Доповнення\nПерший рядок.\nДругий рядок.\n",
        encoding="utf-8",
    )
    (tmp_path / "ua-law-8-8.txt").write_text("Кодекс\nСтаття 10 Сфера дії\nТекст.\n", encoding="utf-8")
    provisions = read_text_acts(tmp_path)
    assert [(p.act, p.ref) for p in provisions] == [
        ("ua-law-7-7", "preamble"), ("ua-law-7-7", "art1"), ("ua-law-7-7", "art1-1"), ("ua-law-8-8", "art10"),
    ]  # fmt: skip
    preamble, art1, art11, art10 = provisions
    assert preamble.text == "Цей Закон визначає приклад." and preamble.issued == "2021-03-04"
    assert art1.title == "Стаття 1. Терміни" and art1.act_title == "Закон України «Про приклад»"
    assert art11.text == "Перший рядок.\nДругий рядок."
    assert art10.issued == "" and art10.status == "unknown"
    assert read_provisions(tmp_path, {"ua-law-8-8"}) == [art10]


def test_text_act_errors(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Закон\nСтаття 1. А\nx\nСтаття 1. Б\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 4"):
        read_text_acts(tmp_path)
    (tmp_path / "a.txt").write_text("Закон без статей\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"a\.txt.*no 'Стаття N' heading"):
        read_text_acts(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no \.txt acts"):
        read_text_acts(tmp_path / "empty")
