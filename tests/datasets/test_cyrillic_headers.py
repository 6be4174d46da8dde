"""Ukrainian option headers: a ZNO-style bank with columns "питання", "А".."Г" (or "Варіант А",
a "варіанти" list) and "відповідь"/"правильна відповідь"/"ключ" is read without a mapping, in CSV, XLSX
and JSONL; a header with two runs of option columns or two key-like columns stops with one line naming
them (exit 2). Every fixture is generated here."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
import pytest

from blindmcq.cli.audit import main
from blindmcq.datasets.generic import guess_mapping, load_generic

ROWS = [  # question, four options, the key letter (Ukrainian exam letters)
    ("Столиця України?", ["Львів", "Київ", "Одеса", "Харків"], "Б"),
    ("Найдовша річка України?", ["Дніпро", "Дністер", "Південний Буг", "Десна"], "А"),
    ("Найвища гора України?", ["Піп Іван", "Петрос", "Говерла", "Бребенескул"], "В"),
    ("Яке море омиває Крим?", ["Балтійське", "Каспійське", "Північне", "Чорне"], "Г"),
    ("Обласний центр на Дністрі?", ["Суми", "Полтава", "Чернівці", "Рівне"], "В"),
]
KEYS = [1, 0, 2, 3, 2]  # "В" is the third option (Ukrainian order), not a look-alike of the Latin B


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        out.writerows(rows)
    return path


def write_xlsx(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def columns_bank(tmp_path: Path, kind: str, options: list[str], key: str) -> Path:
    header = ["питання", *options, key]
    rows = [[q, *opts, k] for q, opts, k in ROWS]
    if kind == "csv":
        return write_csv(tmp_path / "zno.csv", header, rows)
    if kind == "xlsx":
        return write_xlsx(tmp_path / "zno.xlsx", header, rows)
    return write_jsonl(tmp_path / "zno.jsonl", [dict(zip(header, r, strict=True)) for r in rows])


@pytest.mark.parametrize("kind", ["csv", "xlsx", "jsonl"])
@pytest.mark.parametrize(
    ("options", "key"),
    [
        (["А", "Б", "В", "Г"], "відповідь"),
        (["Варіант А", "Варіант Б", "Варіант В", "Варіант Г"], "Правильна відповідь"),
        (["варіант_а", "варіант_б", "варіант_в", "варіант_г"], "ключ"),
    ],
)
def test_ukrainian_headers_are_guessed_and_read(
    tmp_path: Path, kind: str, options: list[str], key: str
) -> None:
    bank = columns_bank(tmp_path, kind, options, key)
    out = tmp_path / "audit"
    assert main([str(bank), "--surface-only", "--out", str(out)]) == 0
    items = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [it["key"] for it in items] == KEYS
    assert [it["question"] for it in items] == [q for q, _, _ in ROWS]
    assert [it["options"] for it in items] == [opts for _, opts, _ in ROWS]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"question=питання, options={options[0]}..{options[-1]}, key={key}, key format=label" in report
    assert "slot 2 (Б) 1 (0.200)" in report and "slot 3 (В) 2 (0.400)" in report  # the bank's own labels


def test_a_list_column_named_in_ukrainian(tmp_path: Path) -> None:
    bank = write_jsonl(
        tmp_path / "zno.jsonl",
        [{"Запитання": q, "Варіанти відповіді": opts, "Відповідь": k} for q, opts, k in ROWS],
    )
    kwargs, note = guess_mapping(["Запитання", "Варіанти відповіді", "Відповідь"],
                                 [{"Відповідь": "Б", "Варіанти відповіді": ROWS[0][1]}],
                                 header=True)  # fmt: skip
    assert kwargs == {"question": "Запитання", "key": "Відповідь", "key_format": "label",
                      "options": "Варіанти відповіді"}  # fmt: skip
    assert "question=Запитання" in note
    assert [it.key for it in load_generic(bank, **kwargs)] == KEYS


@pytest.mark.parametrize(
    ("header", "says"),
    [
        # Latin and Cyrillic option letters both: which are the options?
        (
            ["питання", "A", "B", "C", "D", "А", "Б", "В", "Г", "відповідь"],
            "two runs of option columns, ['A', 'B', 'C', 'D'] (Latin letters) and ['А', 'Б', 'В', 'Г'] "
            "(Cyrillic letters); name the options with --options",
        ),
        # two key-like columns, neither outranking the other
        (
            ["питання", "А", "Б", "В", "Г", "відповідь", "правильна відповідь"],
            "several columns could be the key: ['відповідь', 'правильна відповідь']; name it with --key",
        ),
        (
            ["питання", "А", "Б", "В", "Г", "answer", "ключ"],
            "several columns could be the key: ['answer', 'ключ']; name it with --key",
        ),
    ],
)
def test_an_ambiguous_header_stops_with_one_line_naming_the_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: list[str], says: str
) -> None:
    rows = [[q, *opts, *([""] * (len(header) - 2 - len(opts))), k] for q, opts, k in ROWS]
    bank = write_csv(tmp_path / "zno.csv", header, rows)
    assert main([str(bank), "--surface-only", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert says in err and "zno.csv" in err
    assert not (tmp_path / "a" / "report.md").exists()


def test_a_key_column_named_once_is_taken_and_the_override_settles_the_ambiguity(tmp_path: Path) -> None:
    header = ["питання", "А", "Б", "В", "Г", "відповідь", "правильна відповідь"]
    bank = write_csv(tmp_path / "zno.csv", header, [[q, *o, "", k] for q, o, k in ROWS])
    out = tmp_path / "a"
    assert main([str(bank), "--key", "правильна відповідь", "--surface-only", "--out", str(out)]) == 0
    lines = (out / "items.jsonl").read_text(encoding="utf-8").splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert keys == KEYS
