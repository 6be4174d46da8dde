"""Any bank: more than 26 options, the files researchers have, and lexical search only in the
statutes' language. The 32-option fixture is 12 real LEXam perturbation rows (CC BY 4.0; see
tests/fixtures/audit/README.md); the counts are checked against plain-Python counts over the workbook."""

from __future__ import annotations

import ast
import csv
import json
from dataclasses import replace
from pathlib import Path

import openpyxl
import pandas as pd
import pyarrow as pa
import pytest

from blindmcq.auditing.audit import AUDIT_GROUPS, Mapping, run_audit
from blindmcq.cli.audit import main, with_overrides
from blindmcq.config.files import load_groups, load_model_file, read_group
from blindmcq.config.schema import model_config, validate, validate_group
from blindmcq.datasets.generic import guess_mapping, load_generic
from blindmcq.datasets.registry import load_dataset
from blindmcq.errors import InputError
from blindmcq.statutes.language import lexical_absent

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "audit"
P32 = FIXTURES / "lexam_perturbation_12.xlsx"


def workbook_rows(path: Path) -> list[dict[str, object]]:
    """The workbook's rows read with openpyxl alone (no pandas, no project code)."""
    sheet = openpyxl.load_workbook(path, read_only=True).worksheets[0]
    rows = list(sheet.iter_rows(values_only=True))
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def longest_share(rows: list[dict[str, object]], n: int) -> float:
    """Ties credited 1/k: the expected score of a random break among the k longest options."""
    hits = 0.0
    for row in rows:
        options = ast.literal_eval(str(row[f"{n}_choices"]))
        lengths = [len(" ".join(o.split())) for o in options]
        best = max(lengths)
        hits += (lengths[int(row[f"{n}_choices_gold"])] == best) / lengths.count(best)  # type: ignore[arg-type]
    return hits / len(rows)


def table2(result_summary: pd.DataFrame, strategy: str) -> tuple[float, int]:
    row = result_summary.set_index("strategy").loc[strategy]
    return float(row["accuracy"]), int(row["n"])


@pytest.mark.parametrize("n", [8, 16, 32])
def test_lexam_perturbation_banks_audit_straight_from_the_xlsx(
    shared_data: Path, tmp_path: Path, n: int
) -> None:
    """The issue's counts (ties credited 1/k): longest 0.1160, 0.0736, 0.0234 of 385 items."""
    expected = {8: 0.1160, 16: 0.0736, 32: 0.0234}[n]
    xlsx = shared_data / "lexam" / "MCQs_test_perturbation.xlsx"
    mapping = Mapping(options=[f"{n}_choices"], key=f"{n}_choices_gold")
    result = run_audit(xlsx, tmp_path / "out", mapping, model=None, configs=load_groups(AUDIT_GROUPS))
    accuracy, items = table2(result.summary, "longest")
    assert items == 385 and round(accuracy, 4) == expected
    assert accuracy == pytest.approx(longest_share(workbook_rows(xlsx), n))
    assert "Lexical search skipped" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_lexam_32_dataset_config_audits_with_the_probe(shared_data: Path, tmp_path: Path) -> None:
    """``blindmcq audit dataset=lexam-32``: the shipped config, 32 options labelled A..Z, AA..AF."""
    xlsx = shared_data / "lexam" / "MCQs_test_perturbation.xlsx"
    out = tmp_path / "out"
    assert main(["dataset=lexam-32", f"dataset.path={xlsx}", "--sample", "40", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["bank/n_items"] == 385 and metrics["table2/longest"] == 0.023
    predictions = pd.read_parquet(out / "predictions.parquet")
    answered = predictions[predictions["picked_slot"] >= 26]  # answered with a label past Z, and read
    assert (
        not answered.empty
        and answered["raw_response"].str.strip().isin(["AA", "AB", "AC", "AD", "AE", "AF"]).all()
    )


def test_a_32_option_bank_audits_without_data(tmp_path: Path) -> None:
    """The fixture in LEXam's layout: the surface counts match a plain count, and the probe runs with
    the default labels (Latin, going on AA..AF) and with numerals (1..32)."""
    rows = workbook_rows(P32)
    configs = load_groups(AUDIT_GROUPS)
    mapping = Mapping(options=["32_choices"], key="32_choices_gold")
    surface = run_audit(P32, tmp_path / "s", mapping, model=None, configs=configs)
    assert table2(surface.summary, "longest") == (pytest.approx(longest_share(rows, 32)), 12)
    assert surface.analysis is None and not (tmp_path / "s" / "predictions.parquet").exists()
    assert "surface-only" in (tmp_path / "s" / "report.md").read_text(encoding="utf-8")
    keys = [int(str(r["32_choices_gold"])) for r in rows]
    assert surface.metrics["bank/key_share/AF"] == round(keys.count(31) / 12, 3)  # slots past Z named AA..AF
    for labels, last in (("latin", "AF"), ("numerals", "32")):
        out = tmp_path / labels
        result = run_audit(
            P32, out, mapping, model=model_config(load_model_file("longest")), configs=configs, labels=labels
        )
        predictions = pd.read_parquet(out / "predictions.parquet")
        assert set(predictions["n_options"]) == {32} and predictions["parse_status"].eq("ok").all()
        assert last in set(predictions["raw_response"].str.strip())
        assert predictions["picked_slot"].max() == 31
        # the heuristic reads the option texts: its blind pick is the longest option, whatever the labels
        blind = predictions[(predictions["condition"] == "blind") & (predictions["order_id"] == "rot0")]
        assert result.metrics["blind_acc/all"] == pytest.approx(round(blind["correct"].mean(), 3), abs=1e-3)
        assert result.settings["labels"] == labels


def test_several_option_lists_stop_naming_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(P32), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'32_choices'" in err and "--options" in err and "--key" in err


def test_model_none_is_surface_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(P32), "--options", "16_choices", "--key", "16_choices_gold", "--out", str(tmp_path / "o")]
    assert main([*args, "--model", "none"]) == 0
    out = capsys.readouterr()
    assert "index.html" not in out.out and (tmp_path / "o" / "metrics.json").exists()
    metrics = json.loads((tmp_path / "o" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["bank/n_items"] == 12 and not any(k.startswith("blind_acc") for k in metrics)


def test_a_label_scheme_that_cannot_label_the_bank_is_refused(tmp_path: Path) -> None:
    configs = load_groups(AUDIT_GROUPS)
    latin = configs.options["labels"]["latin"]
    configs.options["labels"]["short"] = replace(latin, name="short", extend="none")
    with pytest.raises(Exception, match=r"--labels.*short cannot label a 32-option item"):
        longest = model_config(load_model_file("longest"))
        run_audit(P32, tmp_path / "o", Mapping(options=["32_choices"], key="32_choices_gold"),
                  model=longest, configs=configs, labels="short")  # fmt: skip


def test_lexam_32_config_runs_on_the_fixture(tmp_path: Path) -> None:
    """``-S dataset=lexam-32``: the shipped config reads a 32-option workbook (here the fixture)."""
    items = load_dataset(
        validate_group("dataset", with_overrides(read_group("dataset", "lexam-32"), [f"dataset.path={P32}"]))
    )
    assert len(items) == 12 and {i.n_options for i in items} == {32}
    with pytest.raises(Exception, match=r"expected dataset.KEY=VALUE after dataset=lexam-32, got 'path=x'"):
        with_overrides(read_group("dataset", "lexam-32"), ["path=x"])


# ------------------------------------------------------------------ the files researchers have

ROWS = [
    {"question": "Which court hears appeals?",
     "choices": ["A district court", "The court of appeal", "None", "Both"], "answer": 1},
    {"question": "Who signs a statute?",
     "choices": ["The president", "A judge", "A clerk", "Nobody at all"], "answer": 3},
    {"question": "What binds lower courts?",
     "choices": ["Custom", "Precedent of the supreme court", "Doctrine", "Habit"], "answer": 0},
]  # fmt: skip


def _items_of(path: Path, **kwargs: object) -> list[tuple[str, tuple[str, ...], int | None]]:
    return [(i.question, i.options, i.key) for i in load_generic(path, **kwargs)]  # type: ignore[arg-type]


def write_save_to_disk(folder: Path, rows: list[dict[str, object]]) -> Path:
    """A folder as Hugging Face ``datasets``' save_to_disk writes it: the rows as an Arrow IPC stream in
    data-00000-of-00001.arrow, state.json listing it, dataset_info.json describing the features."""
    folder.mkdir(parents=True)
    table = pa.Table.from_pylist(rows)
    with pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    features = {
        "question": {"dtype": "string", "_type": "Value"},
        "choices": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"},
        "answer": {"names": ["A", "B", "C", "D"], "_type": "ClassLabel"},
    }
    (folder / "dataset_info.json").write_text(json.dumps({"features": features}), encoding="utf-8")
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_fingerprint": "0",
             "_format_columns": None, "_format_kwargs": {}, "_format_type": None,
             "_output_all_columns": False, "_split": "test"}  # fmt: skip
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    return folder


def test_every_format_reads_the_same_bank_with_guessed_columns(tmp_path: Path) -> None:
    expected = [(r["question"], tuple(r["choices"]), r["answer"]) for r in ROWS]  # type: ignore[arg-type]
    flat = [{"question": r["question"], **dict(zip("ABCD", r["choices"], strict=True)),  # type: ignore[arg-type]
             "answer": "ABCD"[r["answer"]]} for r in ROWS]  # type: ignore[index]  # fmt: skip
    jsonl = tmp_path / "lm_eval.jsonl"  # lm-evaluation-harness records: question/choices/answer
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    gold = tmp_path / "gold.jsonl"  # ... or gold
    gold.write_text(
        "".join(json.dumps({**r, "gold": r.pop("answer")}) + "\n" for r in map(dict, ROWS)), "utf-8"
    )
    pd.DataFrame(ROWS).to_parquet(tmp_path / "b.parquet")
    pd.DataFrame(flat).to_csv(tmp_path / "b.csv", index=False)
    pd.DataFrame(flat).to_csv(tmp_path / "b.tsv", index=False, sep="\t")
    with (tmp_path / "headerless.tsv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t").writerows([list(r.values()) for r in flat])
    pd.DataFrame(flat).to_excel(tmp_path / "columns.xlsx", index=False)
    pd.DataFrame([{**r, "choices": repr(r["choices"])} for r in ROWS]).to_excel(
        tmp_path / "list.xlsx", index=False
    )
    saved = write_save_to_disk(tmp_path / "saved", ROWS)
    for path in ("lm_eval.jsonl", "gold.jsonl", "b.parquet", "b.csv", "b.tsv", "columns.xlsx", "list.xlsx"):
        assert _items_of(tmp_path / path) == expected, path
    assert _items_of(tmp_path / "headerless.tsv", header=False) == expected
    assert _items_of(saved) == expected
    kwargs, note = guess_mapping(["question", "choices", "answer"], ROWS, header=True)
    assert kwargs == {"question": "question", "options": "choices", "key": "answer", "key_format": "index"}
    assert note.startswith(
        "guessed question=question, options=choices (a list), key=answer, key format=index"
    )
    assert "override with dataset.question" in note
    # a dataset config reads the same files (loader generic, nothing mapped)
    for path in (saved, tmp_path / "list.xlsx"):
        cfg = {"name": "t", "loader": "generic", "path": str(path), "language": "en"}
        assert [
            (i.question, i.options, i.key) for i in load_dataset(validate_group("dataset", cfg))
        ] == expected


def test_the_audit_says_what_it_guessed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = write_save_to_disk(tmp_path / "saved", ROWS * 4)
    assert main([str(saved), "--surface-only", "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    guessed = [line for line in err.splitlines() if "guessed" in line]
    assert len(guessed) == 1 and "options=choices" in guessed[0] and "--options" in guessed[0]


def test_a_jsonl_bank_with_cyrillic_keys_audits_with_key_format_label(tmp_path: Path) -> None:
    choices = ["один", "два", "три", "чотири"]
    rows = [{"question": f"Питання {i}?", "choices": choices, "answer": "АБВГ"[i % 4]} for i in range(16)]
    path = tmp_path / "zno.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    assert main([str(path), "--key-format", "label", "--model", "none", "--out", str(out)]) == 0
    keys = [
        json.loads(line)["key"] for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert keys == [i % 4 for i in range(16)]


def test_a_save_to_disk_dataset_dict_asks_for_a_split(tmp_path: Path) -> None:
    root = tmp_path / "dd"
    write_save_to_disk(root / "test", ROWS)
    (root / "dataset_dict.json").write_text('{"splits": ["test"]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"DatasetDict folder; give one split's folder \(have \['test'\]\)"):
        load_generic(root)


# ------------------------------------------------------------------ language


def test_lexical_search_follows_the_bank_language(tmp_path: Path) -> None:
    from blindmcq.datasets.items import Item

    uk = [Item("x-y-1", "x", "y", 1, "Яка форма державного устрою?", ("унітарна", "федеративна"), 0)]
    en = [Item("x-y-1", "x", "y", 1, "Which court?", ("a court", "no court"), 0)]
    assert lexical_absent(validate({}, file=None), uk) is None  # the default bank: Ukrainian, as the statutes
    reason = lexical_absent(validate({}, file=None), en)
    assert reason and "'latin'" in reason and "detected from the script" in reason
    assert (
        lexical_absent(validate({"dataset": {"loader": "items", "language": "uk"}}, file=None), en) is None
    )  # declared wins
    declared = lexical_absent(validate({"dataset": {"loader": "items", "language": "de"}}, file=None), uk)
    assert declared and "'de'" in declared and "declared" in declared
    both = {"dataset": {"loader": "items", "language": "de"}, "statutes": {"language": "de"}}
    assert lexical_absent(validate(both, file=None), uk) is None


def test_letter_keys_go_on_past_z(tmp_path: Path) -> None:
    """A 30-option bank keyed in letters: "AB" is option 28, as the labels name it (labels.combined)."""
    options = [f"option {i}" for i in range(30)]
    keys = ["A", "Z", "AA", "ab", "AD"]
    path = tmp_path / "wide.jsonl"
    path.write_text("".join(json.dumps({"question": f"q{i}", "options": options, "answer": k}) + "\n"
                            for i, k in enumerate(keys)), encoding="utf-8")  # fmt: skip
    assert [i.key for i in load_generic(path)] == [0, 25, 26, 27, 29]
    path.write_text(
        json.dumps({"question": "q", "options": options, "answer": "AE"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match="'AE' is not one of the labels"):
        load_generic(path)


def test_a_declared_language_decides_the_lexical_row(tmp_path: Path) -> None:
    choices = ["позовна давність", "строк", "договір", "закон"]
    rows = [{"question": f"Питання {i}?", "choices": choices, "answer": i % 4} for i in range(8)]
    path = tmp_path / "uk.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "de"
    assert main([str(path), "--language", "de", "--model", "none", "--out", str(out)]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "the bank is 'de'" in report and "| language | de (declared) |" in report
    assert "table2/lexical_search" not in json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    out = tmp_path / "uk"
    assert main([str(path), "--model", "none", "--out", str(out)]) == 0  # detected: Cyrillic, as the statutes
    assert "table2/lexical_search" in json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def test_arc_style_choices_carry_their_own_labels(tmp_path: Path) -> None:
    """ARC on the Hub: ``choices`` is a struct of texts and labels ("A".. or "1"..), ``answerKey`` one of
    those labels; read the same from JSONL and from a save_to_disk folder (an Arrow struct column)."""
    rows = [
        {"id": "a1", "question": "Which is a mammal?",
         "choices": {"text": ["trout", "whale", "shark"], "label": ["A", "B", "C"]}, "answerKey": "B"},
        {"id": "a2", "question": "Which melts first?",
         "choices": {"text": ["ice", "iron", "stone", "glass"], "label": ["1", "2", "3", "4"]},
         "answerKey": "1"},
    ]  # fmt: skip
    jsonl = tmp_path / "arc.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    expected = [("Which is a mammal?", ("trout", "whale", "shark"), 1),
                ("Which melts first?", ("ice", "iron", "stone", "glass"), 0)]  # fmt: skip
    assert _items_of(jsonl) == expected
    assert _items_of(write_save_to_disk(tmp_path / "arc", rows)) == expected
    kwargs, _ = guess_mapping(["id", "question", "choices", "answerKey"], rows, header=True)
    assert kwargs == {"question": "question", "options": "choices", "key": "answerKey", "key_format": "label"}


def test_numeral_keys_read_as_the_numerals_scheme(tmp_path: Path) -> None:
    """Key letters in every shipped scheme: "3" under --key-format label is the third option (1-based, as
    the numerals scheme labels it); numerals mixed with letters stop."""
    options = ["one", "two", "three", "four"]
    path = tmp_path / "n.jsonl"
    path.write_text("".join(json.dumps({"question": f"q{i}", "options": options, "key": k}) + "\n"
                            for i, k in enumerate(["1", "3", "4"])), encoding="utf-8")  # fmt: skip
    assert [i.key for i in load_generic(path, key_format="label")] == [0, 2, 3]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"question": "q9", "options": options, "key": "B"}) + "\n")
    with pytest.raises(InputError, match=r"mix letters and numerals \(numeral at line 1, Latin at line 4\)"):
        load_generic(path, key_format="label")
