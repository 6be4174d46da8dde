import ast
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.datasets.lexam import load_lexam
from blindmcq.errors import ConfigError, InputError


@pytest.fixture(scope="module")
def lexam_dir(inputs: Path) -> Path:
    return inputs / "lexam"


def test_four_choice_split_matches_the_workbook(lexam_dir):
    items = load_lexam(lexam_dir / "MCQs_test.xlsx")
    frame = pd.read_excel(lexam_dir / "MCQs_test.xlsx")
    assert len(items) == len(frame)  # 1,660 in the full file: tests/test_profile.py
    assert all(i.usable and i.n_options == 4 for i in items)
    assert [i.id for i in items[:2]] == ["lexam-test-1", "lexam-test-2"]
    for item, (_, row) in zip(items[::7], frame.iloc[::7].iterrows(), strict=True):
        assert list(item.options) == ast.literal_eval(row["choices"])
        assert item.key == row["gold"] and item.meta["lexam_id"] == row["id"]
        assert item.meta["language"] == row["language"] and item.meta["year"] == row["year"]
        assert isinstance(item.meta["none_as_an_option"], bool)


@pytest.mark.parametrize("n", [4, 8, 16, 32])
def test_perturbations_by_option_count(lexam_dir, n):
    items = load_lexam(lexam_dir / "MCQs_test_perturbation.xlsx", n_options=n)
    frame = pd.read_excel(lexam_dir / "MCQs_test_perturbation.xlsx")
    assert len(items) == len(frame)  # 385 in the full file: tests/datasets/test_dataset_registry.py
    assert {i.n_options for i in items} == {n}
    assert items[0].id == f"lexam-perturbation-{n}-1"
    assert [i.key for i in items] == frame[f"{n}_choices_gold"].tolist()
    assert (
        items[0].options[items[0].key]
        == ast.literal_eval(frame[f"{n}_choices"][0])[frame[f"{n}_choices_gold"][0]]
    )


def test_unavailable_option_count_names_the_key(lexam_dir):
    with pytest.raises(ConfigError, match=r"'dataset\.n_options'"):
        load_lexam(lexam_dir / "MCQs_test.xlsx", n_options=8)
    with pytest.raises(ConfigError, match=r"dataset\.n_options.*\[4, 8, 16, 32\]"):
        load_lexam(lexam_dir / "MCQs_test_perturbation.xlsx", n_options=5)


def test_bad_row_names_file_row_and_column(tmp_path):
    path = tmp_path / "bad.xlsx"
    pd.DataFrame(
        {"question": ["q1", "q2"], "choices": ["['i', 'ii']", "['i', 'ii'"], "gold": [0, 1], "id": ["a", "b"]}
    ).to_excel(path, index=False)
    with pytest.raises(InputError, match=r"bad\.xlsx: row 2, column 'choices'"):
        load_lexam(path)
    pd.DataFrame(
        {"question": ["q"], "choices": ["['i', 'ii', 'iii', 'iv']"], "gold": [4], "id": ["a"]}
    ).to_excel(path, index=False)
    with pytest.raises(InputError, match=r"row 1, column 'gold'"):
        load_lexam(path)
