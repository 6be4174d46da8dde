"""Errors, not tracebacks: each bad input gives one line naming the file, row, item or
config key (InputError/ConfigError, exit 2 at the entry points); earlier outputs stay intact."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from blindmcq.atomic import replace_tree
from blindmcq.config.files import load_group
from blindmcq.config.schema import validate_group
from blindmcq.datasets.generic import load_generic
from blindmcq.datasets.items import Item, read_items, write_items
from blindmcq.datasets.registry import load_dataset
from blindmcq.errors import ConfigError, InputError
from blindmcq.tasks.presentations import build_presentations
from blindmcq.tasks.probe import sample_items

ROOT = Path(__file__).resolve().parents[1]
ABCD = {"option_columns": ["A", "B", "C", "D"], "key": "answer", "key_format": "label"}


def _items(n: int) -> list[Item]:
    return load_dataset(
        validate_group("dataset", {"loader": "nonsense", "name": "n", "n_test": n, "n_fewshot": 0, "seed": 0})
    )


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_errors_not_tracebacks_non_utf8_jsonl_names_file_and_line(tmp_path: Path) -> None:
    good = json.dumps({"question": "Q", "options": ["a", "b"], "key": 0})
    path = tmp_path / "bank.jsonl"
    path.write_bytes(good.encode() + b"\n" + b'{"question": "Q\xff", "options": ["a", "b"], "key": 0}\n')
    with pytest.raises(InputError) as info:
        load_generic(path)
    assert (info.value.file, info.value.line) == (str(path), 2) and "not UTF-8" in _one_line(info.value)
    items = tmp_path / "items.jsonl"
    write_items(items, _items(2))
    items.write_bytes(items.read_bytes() + b"\xfe\xff\n")
    with pytest.raises(InputError) as info:
        read_items(items)
    assert (info.value.file, info.value.line) == (str(items), 3) and "not UTF-8" in _one_line(info.value)


def test_errors_not_tracebacks_header_only_csv(tmp_path: Path) -> None:
    path = tmp_path / "bank.csv"
    path.write_text("question,A,B,C,D,answer\n", encoding="utf-8")
    with pytest.raises(InputError, match="no data rows") as info:  # was "column 'order' is double" later
        load_generic(path, **ABCD)
    assert info.value.file == str(path)


def test_errors_not_tracebacks_ragged_csv_names_the_row_instead_of_shifting(tmp_path: Path) -> None:
    path = tmp_path / "bank.csv"
    # one field more than the header: pandas took the first column as the index and read every cell
    # shifted by one; with key_format text that was a silent misread
    path.write_text("question,A,B,C,D,answer\nQ1?,a,b,c,d,a\nQ2?,a,b,c,d,b,x\n", encoding="utf-8")
    for key_format in ("label", "text"):
        with pytest.raises(InputError, match=r"row 2 \(line 3\) has 7 fields, the header 6"):
            load_generic(path, **{**ABCD, "key_format": key_format})
    path.write_text("question,A,B,C,D,answer\nQ1?,a,b,c,d,A\nQ2?,a,b,c,d,B\n", encoding="utf-8")
    items = load_generic(path, **ABCD)
    assert [(i.question, i.options, i.key) for i in items] == [
        ("Q1?", ("a", "b", "c", "d"), 0), ("Q2?", ("a", "b", "c", "d"), 1)
    ]  # fmt: skip


@pytest.mark.parametrize("key", [True, False, 1.5])
def test_errors_not_tracebacks_json_true_is_not_an_index(tmp_path: Path, key: object) -> None:
    path = tmp_path / "bank.jsonl"
    path.write_text(json.dumps({"question": "Q", "options": ["a", "b", "c"], "key": key}) + "\n")
    with pytest.raises(InputError, match="is not an integer") as info:
        load_generic(path)
    assert "line 1" in _one_line(info.value)
    record = _items(1)[0].to_json()
    (tmp_path / "items.jsonl").write_text(json.dumps({**record, "key": key}) + "\n")
    with pytest.raises(InputError, match="key must be an integer"):
        read_items(tmp_path / "items.jsonl")


def test_errors_not_tracebacks_more_options_than_labels_names_the_item() -> None:
    options = tuple(f"option {i}" for i in range(30))
    item = Item(id="big-b-7", source="big", bank="b", number=7, question="Q?", options=options, key=0,
                status="ok", flags=(), file="big.jsonl")  # fmt: skip
    with pytest.raises(InputError) as info:
        build_presentations(
            [item], conditions=["blind"], blind_orders=["rot0"], full_orders=[], forced=False,
            prompt=load_group("prompt", "original"),
            labels=replace(load_group("labels", "latin"), extend="none"),  # a scheme that stops at Z
            reasoning=load_group("reasoning", "direct"),
        )  # fmt: skip
    assert info.value.item == "big-b-7" and info.value.file == "big.jsonl"
    assert "30 options" in _one_line(info.value) and "26 symbols" in str(info.value)
    assert "does not extend" in str(info.value)


def test_errors_not_tracebacks_sample_beyond_the_bank() -> None:
    items = _items(12)
    assert len(sample_items(items, None, 0)) == 12 and len(sample_items(items, 12, 0)) == 12
    with pytest.raises(ConfigError, match=r"probe.sample.*100000 exceeds the 12 usable items; use null"):
        sample_items(items, 100000, 0)
    for bad in ("abc", 2.5, 0, True):
        with pytest.raises(ConfigError, match=r"probe\.sample"):
            sample_items(items, bad, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("stage", "key", "value", "expected"),
    [
        ("probe", "probe.sample", "abc", "params.yaml: probe.sample: expected an integer or null, got 'abc'"),
        ("probe", "probe.sample", 2.5, "params.yaml: probe.sample: expected an integer or null, got 2.5"),
        ("gate", "gate.k", "abc", "params.yaml: gate.k: expected an integer or null, got 'abc'"),
        ("probe", "probe.sample", 100000, "config key 'probe.sample': 100000 exceeds the 12 usable items"),
        ("probe", "model.regoin", "x", "params.yaml: model.regoin: unknown key; expected one of"),
    ],
)
def test_errors_not_tracebacks_stage_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    stage: str, key: str, value: object, expected: str,
) -> None:  # fmt: skip
    import importlib

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["model"] = {"name": "longest", "backend": "heuristic", "strategy": "longest"}
    params["probe"]["cache"] = str(tmp_path / "cache.sqlite")
    group, name = key.split(".")
    params[group][name] = value
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    write_items(tmp_path / "results/corpus/items.jsonl", _items(12))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        importlib.import_module(f"blindmcq.stages.{stage}").main()
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"blindmcq {stage}: error: {expected}") and len(err.splitlines()) == 1


def test_errors_not_tracebacks_report_folder_replaced_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "reports/figures"
    old.mkdir(parents=True)
    (old / "figure1.png").write_bytes(b"old figure")
    new = tmp_path / "analysis/figures"
    new.mkdir(parents=True)
    (new / "figure1.png").write_bytes(b"new figure")
    (new / "figure2.png").write_bytes(b"new figure 2")

    real_copytree = shutil.copytree

    def failing_copytree(src: Path, dst: Path, **kwargs: object) -> object:
        real_copy = shutil.copy2
        calls = {"n": 0}

        def copy_then_fail(a: str, b: str, **kw: object) -> object:  # the second file fails: disk full
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError("disk full")
            return real_copy(a, b)

        return real_copytree(src, dst, copy_function=copy_then_fail, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copytree", failing_copytree)
    with pytest.raises(OSError, match="disk full"):
        replace_tree(new, old)
    assert sorted(p.name for p in old.iterdir()) == ["figure1.png"]  # the old folder, untouched
    assert (old / "figure1.png").read_bytes() == b"old figure"
    assert [p.name for p in old.parent.iterdir()] == ["figures"]  # no temporary folder left behind

    monkeypatch.setattr(shutil, "copytree", real_copytree)
    replace_tree(new, old)
    assert sorted(p.name for p in old.iterdir()) == ["figure1.png", "figure2.png"]
    assert (old / "figure1.png").read_bytes() == b"new figure"


def test_an_error_is_one_line_even_when_the_key_holds_a_line_break() -> None:
    from blindmcq.config.schema import validate

    params = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text(encoding="utf-8"))
    params["analysis"]["a\nb"] = 1  # YAML allows such a key ("? |" block keys)
    with pytest.raises(ConfigError) as info:
        validate(params)
    assert "\n" not in str(info.value) and "a\\nb" in str(info.value)
    assert "\n" not in str(InputError("bad\nrow", file="bank.csv", line=3))
