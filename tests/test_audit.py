"""``blindmcq audit`` on a real headerless four-option CSV (80 English LEXam items, CC BY 4.0; see
tests/fixtures/audit/README.md): the three outputs, numbers checked against plain-Python counts over
the CSV, and one-line errors for wrong mappings."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.auditing.audit import AUDIT_GROUPS, DEFAULT_MODEL, Mapping, bank_language, run_audit
from blindmcq.cli import main as cli_main
from blindmcq.cli.audit import main
from blindmcq.config.files import load_groups, load_model_file
from blindmcq.config.schema import model_config
from blindmcq.datasets.items import Item

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "audit" / "lexam_en_80.csv"


def csv_rows() -> list[list[str]]:
    with FIXTURE.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def independent_share(pick: str) -> float:
    """Share of rows whose key is the longest (or shortest) option, counted in plain Python: length on
    whitespace-normalised text, a tie of k options earning 1/k when the key is among them."""
    rows = csv_rows()
    hits = 0.0
    for row in rows:
        options, key = row[1:5], "ABCD".index(row[5].strip())
        lengths = [len(" ".join(o.split())) for o in options]
        extreme = max(lengths) if pick == "longest" else min(lengths)
        hits += (lengths[key] == extreme) / lengths.count(extreme)
    return round(hits / len(rows), 3)


@pytest.fixture(scope="module")
def audited(lexam_audit) -> Path:
    """The audit of FIXTURE (tests/conftest.py's, built once a run), run from an empty folder: nothing
    may be written outside --out (no results/, data/, mlruns/)."""
    assert lexam_audit.returncode == 0, lexam_audit.error
    assert lexam_audit.left_in_cwd == []
    return lexam_audit.out


def test_writes_the_three_files(audited: Path) -> None:
    for name in ("report.md", "index.html", "metrics.json"):
        assert (audited / name).stat().st_size > 0, name
    assert not list(audited.rglob("*.tmp"))  # atomic writes leave no temporaries
    report = (audited / "report.md").read_text(encoding="utf-8")
    assert "## What this audit shows" in report and "Wilson" in report
    assert "Key-position shares" in report and "Option length" in report
    assert "Lexical search skipped" in report  # an English bank, Ukrainian statutes
    page = (audited / "index.html").read_text(encoding="utf-8")
    assert "lexam_en_80.csv" in page and "Table 2" in page


def test_the_html_opens_with_the_conclusions_of_the_markdown(audited: Path) -> None:
    import html
    import re

    report = (audited / "report.md").read_text(encoding="utf-8")
    section = report.split("## What this audit shows\n", 1)[1].split("\n## ", 1)[0]
    bullets = [line[2:] for line in section.splitlines() if line.startswith("- ")]
    assert bullets
    page = (audited / "index.html").read_text(encoding="utf-8")
    opening = page[page.index("<main>") : page.index('id="tables"')]
    assert "<h2>What this audit shows</h2>" in opening
    text = html.unescape(re.sub(r"<[^>]+>", "", opening))
    for bullet in bullets:  # every conclusion, word for word (Markdown's backticks dropped)
        assert bullet.replace("`", "").replace("**", "") in text, bullet


def test_explorer_marks_only_item_level_leaks(audited: Path) -> None:
    """A constant slot holds some item's key everywhere: that is the bank's key-position balance, not
    an item's leak. Only an option-text strategy whose one extreme is the key, or a model right in most
    orders, marks an item; the "no leak found" filter then has items to show."""
    page = (audited / "index.html").read_text(encoding="utf-8")
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert raw
    rows = json.loads(raw.group(1))["items"]
    leaks = {row["number"]: row["leaks"] for row in rows}
    assert not any(tag.startswith("surface: constant") for tags in leaks.values() for tag in tags)
    assert 0 < sum(not tags for tags in leaks.values()) < len(rows)
    for number, row in enumerate(
        csv_rows(), start=1
    ):  # longest tagged exactly where its unique pick is the key
        lengths = [len(" ".join(o.split())) for o in row[1:5]]
        unique_key = lengths.count(max(lengths)) == 1 and lengths.index(max(lengths)) == "ABCD".index(
            row[5].strip()
        )
        assert ("surface: longest" in leaks[number]) == unique_key, number


def test_table2_longest_equals_an_independent_count(audited: Path) -> None:
    metrics = json.loads((audited / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["table2/longest"] == independent_share("longest")
    assert metrics["table2/shortest"] == independent_share("shortest")
    rows = csv_rows()
    keys = [row[5].strip() for row in rows]
    for slot, letter in enumerate("ABCD"):
        share = round(keys.count(letter) / len(rows), 3)
        assert metrics[f"table2/constant_{slot}"] == share
        assert metrics[f"bank/key_share/{letter}"] == share
    assert metrics["bank/n_items"] == len(rows)


def test_probe_and_gate_are_consistent_with_the_heuristic(audited: Path) -> None:
    metrics = json.loads((audited / "metrics.json").read_text(encoding="utf-8"))
    # the default model is the 'longest' heuristic: on the published order it is Table 2's longest up to
    # its random tie breaks (Table 2 credits a tie its expectation, a probe draws one of the tied slots)
    rows = csv_rows()
    lengths = [[len(" ".join(o.split())) for o in row[1:5]] for row in rows]
    tied_share = sum(ls.count(max(ls)) > 1 for ls in lengths) / len(rows)
    assert abs(metrics["blind_acc/all"] - metrics["table2/longest"]) <= tied_share + 0.001
    assert not any("/longest/" in key for key in metrics)  # model-free names, as reports/metrics.json
    gate = json.loads((audited / "gate.json").read_text(encoding="utf-8"))
    assert len(gate["accepted"]) + len(gate["rejected"]) == len(csv_rows())
    assert metrics["gate/n_rejected"] == len(gate["rejected"])


def test_headered_csv_jsonl_and_parquet_give_the_same_table2(audited: Path, tmp_path: Path) -> None:
    rows = csv_rows()
    frame = pd.DataFrame(
        {"stem": [r[0] for r in rows], "choices": [r[1:5] for r in rows], "answer": [r[5] for r in rows]}
    )
    expected = json.loads((audited / "metrics.json").read_text(encoding="utf-8"))
    frame.to_parquet(tmp_path / "bank.parquet")
    frame.to_json(tmp_path / "bank.jsonl", orient="records", lines=True, force_ascii=False)
    wide = pd.DataFrame({"q": frame["stem"], **{c: [r[i + 1] for r in rows] for i, c in enumerate("ABCD")}})
    wide.assign(gold=frame["answer"]).to_csv(tmp_path / "bank.csv", index=False)
    runs = {
        "bank.parquet": ["--question", "stem", "--options", "choices", "--key", "answer"],
        "bank.jsonl": ["--question", "stem", "--options", "choices", "--key", "answer"],
        "bank.csv": ["--question", "q", "--options", "A", "B", "C", "D", "--key", "gold"],
    }
    for name, mapping in runs.items():
        out = tmp_path / f"out-{name}"
        # Table 2 is the surface strategies' (the options alone): no model needed to compare the reads
        args = [str(tmp_path / name), "--out", str(out), *mapping, "--key-format", "label", "--surface-only"]
        assert main(args) == 0
        got = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        table2 = {k: v for k, v in got.items() if k.startswith("table2/")}
        assert table2 and table2 == {k: v for k, v in expected.items() if k.startswith("table2/")}, name


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--key", "1"], ["column '1'", "'i, ii, and iii'", "not one of the labels"]),
        (["--question", "9"], ["column '9'", "--question", "not in the file"]),
        (["--key-format", "index"], ["column '5'", "'B'", "not an integer"]),
        (["--key", "0"], ["column '0'", "--question", "--key"]),
        (["--question", "5", "--key", "0", "--key-format", "label"], ["column '0'", "not one of the labels"]),
    ],
)
def test_a_wrong_mapping_stops_with_one_line(
    args: list[str], names: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main([str(FIXTURE), "--no-header", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for name in names:
        assert name in err
    assert not (out / "report.md").exists()


def test_a_question_column_of_letters_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = csv_rows()
    swapped = tmp_path / "swapped.csv"
    with swapped.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([[r[5], *r[1:5], "A"] for r in rows])  # the letters where the stem was
    assert main([str(swapped), "--no-header", "--out", str(tmp_path / "o")]) == 2
    assert "column '0' (--question) holds" in capsys.readouterr().err


def test_header_options_are_only_for_csv(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text(
        '{"question": "q", "options": ["a", "b"], "key": 0}\n', encoding="utf-8"
    )
    assert main([str(tmp_path / "b.jsonl"), "--no-header", "--out", str(tmp_path / "o")]) == 2


def test_bank_language_by_script() -> None:
    def item(text: str) -> Item:
        return Item("x-y-1", "x", "y", 1, text, ("так", "ні"), 0)

    assert bank_language([item("Яка форма державного устрою України?")]) == "uk"
    assert bank_language([Item("x-y-1", "x", "y", 1, "Which court?", ("a court", "no court"), 0)]) == "latin"


def test_mapping_defaults_follow_mmlu_without_a_header() -> None:
    kwargs, _ = Mapping(header=False).guess(["0", "1", "2", "3", "4", "5"])
    assert kwargs == {
        "question": "0",
        "key": "5",
        "key_format": "label",
        "option_columns": ["1", "2", "3", "4"],
    }


def test_version_and_help_are_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    assert cli_main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"blindmcq {metadata.version('blindmcq')}"
    with pytest.raises(SystemExit) as exc:
        cli_main(["audit", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "examples:" in text and "--no-header" in text and "``" not in text


def test_run_audit_returns_what_it_wrote(audited: Path, tmp_path: Path) -> None:
    # what the command reads, typed as it types it
    model, configs = model_config(load_model_file(DEFAULT_MODEL)), load_groups(AUDIT_GROUPS)
    result = run_audit(FIXTURE, tmp_path / "again", Mapping(header=False), model=model, configs=configs)
    written = json.loads((tmp_path / "again" / "metrics.json").read_text(encoding="utf-8"))
    assert written == json.loads((audited / "metrics.json").read_text(encoding="utf-8"))
    assert result.metrics == written


def test_a_bank_of_two_option_items_audits_with_the_per_n_gate(tmp_path: Path) -> None:
    """N = 2 over 4 orders cannot be rejected at 0.05 (4 of 4 has p = 0.0625): the audit says so instead
    of stopping on one k for the most common N; a 3-option item in the same bank gets its own k."""
    rows = [{"question": f"question {i}", "choices": ["yes" if i % 2 else "no, not at all", "maybe"],
             "answer": "A"} for i in range(30)]  # fmt: skip
    rows += [{"question": f"q3 {i}", "choices": ["a", "bb", "ccc"], "answer": "C"} for i in range(6)]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    main_args = [
        str(path),
        "--out",
        str(out),
        "--key",
        "answer",
        "--options",
        "choices",
        "--key-format",
        "label",
    ]
    assert main(main_args) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "N=2: cannot reject" in report and "30 items cannot be rejected" in report
    gate = json.loads((out / "gate.json").read_text(encoding="utf-8"))
    assert len(gate["untestable"]) == 30


def test_cyrillic_key_letters_name_options_in_the_ukrainian_order(tmp_path: Path) -> None:
    """A Ukrainian school bank prints its keys "А"/"Б"/"В"/"Г": "В" is the third option (not a look-alike
    of Latin "B"); a file mixing the two scripts stops with one line instead of guessing."""
    rows = [{"q": f"питання {i}", "choices": ["один", "два", "три", "чотири"], "answer": "АБВГ"[i % 4]}
            for i in range(12)]  # fmt: skip
    path = tmp_path / "zno.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    args = ["--question", "q", "--options", "choices", "--key", "answer", "--key-format", "label"]
    out = tmp_path / "out"
    assert main([str(path), *args, "--out", str(out)]) == 0
    keys = [
        json.loads(line)["key"] for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert keys == [i % 4 for i in range(12)]
    rows[5]["answer"] = "B"  # Latin: would be option 2, where Cyrillic "В" is option 3
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    from blindmcq.datasets.generic import load_generic
    from blindmcq.errors import InputError

    with pytest.raises(InputError, match="mix Latin and Cyrillic"):
        load_generic(path, question="q", options="choices", key="answer", key_format="label")


def test_the_audit_shows_the_progress_of_its_calls(lexam_audit) -> None:
    assert lexam_audit.returncode == 0, lexam_audit.error  # FIXTURE's audit (tests/conftest.py's, shared)
    err = lexam_audit.stderr
    bar = [line for line in err.replace("\r", "\n").splitlines() if "call" in line and "100%" in line]
    assert bar, err[-2000:]  # tqdm's bar over the probe's calls, on stderr
    assert "/" in bar[-1] and "from_cache" in bar[-1]


def test_metrics_keys_are_in_natural_order_and_documented(audited: Path) -> None:
    from blindmcq.auditing.audit import natural_key

    keys = list(json.loads((audited / "metrics.json").read_text(encoding="utf-8")))
    assert keys == sorted(keys, key=natural_key)
    assert sorted(["table2/constant_10", "table2/constant_2"], key=natural_key)[0] == "table2/constant_2"
    docs = (Path(__file__).resolve().parents[1] / "docs/audit.md").read_text(encoding="utf-8")
    table = docs[docs.index("The keys of `metrics.json`") :]
    for key in keys:
        family = key.split("/")[0]
        assert f"`{family}/" in table or f"`{family}`" in table or f"`{key}`" in table, key
