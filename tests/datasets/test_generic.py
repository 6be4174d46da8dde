import ast
import json
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.datasets.generic import load_generic
from blindmcq.errors import ConfigError, InputError


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_option_columns_and_letter_keys(tmp_path):
    path = write_csv(
        tmp_path / "mmlu.csv",
        "question,A,B,C,D,answer,subject\n"
        "2+2?,3,4,5,6,B,math\n"
        '"Capital of France, in one word?",Paris,Rome,"",Bern,a,geo\n',
    )
    items = load_generic(
        path, source="mmlu", option_columns=["A", "B", "C", "D"], key="answer", key_format="label"
    )
    assert [i.id for i in items] == ["mmlu-mmlu-1", "mmlu-mmlu-2"]
    assert items[0].options == ("3", "4", "5", "6") and items[0].key == 1
    assert items[1].question == "Capital of France, in one word?" and items[1].key == 0
    assert items[1].options[2] == "" and "blank_option" in items[1].flags  # kept, flagged
    assert items[0].meta == {"row": "row 1", "subject": "math"}


def test_jsonl_with_list_column_ids_and_one_based_keys(tmp_path):
    path = tmp_path / "bank.jsonl"
    rows = [
        {"qid": 7, "stem": "a?", "choices": ["x", "y", "z"], "answer": 3},
        {"qid": 9, "stem": "b?", "choices": ["p", "q"], "answer": 1},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    items = load_generic(
        path,
        source="own",
        bank="b1",
        question="stem",
        options="choices",
        key="answer",
        key_format="index1",
        id="qid",
    )
    assert [(i.id, i.number, i.key, i.n_options) for i in items] == [
        ("own-b1-7", 7, 2, 3),
        ("own-b1-9", 9, 0, 2),
    ]


def test_parquet_with_text_keys_and_string_ids(tmp_path):
    path = tmp_path / "arc.parquet"
    pd.DataFrame(
        {
            "id": ["Mercury_7175875", "Mercury_123"],
            "question": ["q1", "q2"],
            "options": [["red", "green", "blue"], ["up", "down", "left", "right", "none"]],
            "key": ["blue", "none"],
        }
    ).to_parquet(path)
    items = load_generic(path, source="arc", id="id", key_format="text")
    assert [i.id for i in items] == ["arc-arc-Mercury_7175875", "arc-arc-Mercury_123"]
    assert [i.number for i in items] == [1, 2]  # non-integer ids: the row
    assert [i.key for i in items] == [2, 4] and items[1].n_options == 5


def test_ten_options_from_real_lexam_perturbations(tmp_path, inputs):
    # A 10-option bank of real items: the key plus the first nine distractors of LEXam's 32-option version.
    frame = pd.read_excel(inputs / "lexam" / "MCQs_test_perturbation.xlsx").head(40)
    path = tmp_path / "lexam10.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for n, (stem, choices, gold) in enumerate(
            zip(frame["question"], frame["32_choices"], frame["32_choices_gold"], strict=True), start=1
        ):
            options = ast.literal_eval(choices)
            key_text = options[gold]
            ten = [o for o in options if o != key_text][:9]
            ten.insert(n % 10, key_text)
            fh.write(json.dumps({"question": stem, "options": ten, "key": n % 10}) + "\n")
    items = load_generic(path, source="lexam10")
    assert len(items) == len(frame) and {i.n_options for i in items} == {10}
    keys = [
        ast.literal_eval(c)[g] for c, g in zip(frame["32_choices"], frame["32_choices_gold"], strict=True)
    ]
    assert all(i.usable for i in items) and [i.options[i.key] for i in items] == keys
    assert {i.key for i in items} == set(range(10))


@pytest.mark.parametrize(
    ("body", "kwargs", "pattern"),
    [
        (
            "question,A,B,answer\nq1,x,y,A\nq2,x,y,C\n",
            {"key_format": "label"},
            r"bad\.csv: row 2, column 'answer': 'C'",
        ),
        ("question,A,B,answer\nq1,x,y,0\nq2,x,y,\n", {}, r"row 2, column 'answer'.*empty"),
        ("question,A,B,answer\nq1,x,y,one\n", {"key_format": "index"}, r"row 1, column 'answer'.*not an int"),
        ("question,A,B,answer\nq1,x,y,2\n", {"key_format": "index"}, r"row 1, column 'answer'.*outside the"),
        ("stem,A,B,answer\nq1,x,y,0\n", {"question": "question"}, r"'question' \(dataset\.question\) is not"),
    ],
)
def test_bad_csv_rows_name_file_row_and_column(tmp_path, body, kwargs, pattern):
    path = write_csv(tmp_path / "bad.csv", body)
    with pytest.raises(InputError, match=pattern):
        load_generic(path, option_columns=["A", "B"], key="answer", **kwargs)


def test_bad_jsonl_lines_are_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"question": "q", "options": ["a", "b"], "key": 0}\n\n{"question": "q2", "options": \n', "utf-8"
    )
    with pytest.raises(InputError, match=r"bad\.jsonl, line 3: not valid JSON"):
        load_generic(path)
    path.write_text('{"question": "q", "options": "a; b", "key": 0}\n', "utf-8")
    with pytest.raises(InputError, match=r"line 1, column 'options': not a list"):
        load_generic(path)
    path.write_text(
        '{"id": 1, "question": "q", "options": ["a", "b"], "key": 0}\n'
        '{"id": 1, "question": "r", "options": ["a", "b"], "key": 1}\n',
        "utf-8",
    )
    with pytest.raises(InputError, match=r"line 2: item id generic-bad-1 repeats \(line 1\)"):
        load_generic(path, id="id")


def test_mapping_errors_name_the_config_key(tmp_path):
    path = write_csv(tmp_path / "b.csv", "question,A,B,key\nq,x,y,0\n")
    with pytest.raises(ConfigError, match=r"'dataset\.key_format'"):
        load_generic(path, option_columns=["A", "B"], key_format="roman")
    with pytest.raises(ConfigError, match=r"'dataset\.option_columns'"):
        load_generic(path, option_columns=["A"])
    with pytest.raises(ConfigError, match=r"'dataset\.format'"):
        load_generic(tmp_path / "b.txt")


def test_duplicate_options_are_flagged_not_dropped(tmp_path):
    path = write_csv(tmp_path / "d.csv", "question,A,B,C,key\nq,same,Same ,other,2\n")
    (item,) = load_generic(path, option_columns=["A", "B", "C"])
    assert item.usable and "duplicate_options" in item.flags and item.options == ("same", "Same ", "other")
