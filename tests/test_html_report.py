"""The static HTML report: its data and, in headless Chromium, the page itself.

Built from real customs items (two acts of the bank) with seeded synthetic predictions over them, the
real gate over those predictions, a lexical-match frame in the baseline stage's columns, a Markdown
table and a PNG figure.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from blindmcq.analysis.gate import gate, write_gate
from blindmcq.analysis.tables import Table, write_tables
from blindmcq.answers.predictions import write_predictions
from blindmcq.answers.records import PredictionRecord
from blindmcq.datasets.customs import load_customs
from blindmcq.datasets.items import Item, write_items
from blindmcq.errors import InputError
from blindmcq.reporting.html import analysis_tables, item_rows, script_json, write_html_report
from blindmcq.surface import chars

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "fixtures" / "samples"  # real customs items, committed
ORDERS = [f"rot{i}" for i in range(4)] + [f"rev{i}" for i in range(4)]
MODELS = {"gate-model": 0.55, "other-model": 0.25}  # chance of a correct blind pick
# keeps to the first displayed slot on even-numbered items (a position habit), picks the key on odd ones
HABIT_MODEL = "slot-model"


# Table 3's shape in the default report: 17 columns of intervals, wider than any screen
WIDE = pd.DataFrame({f"Blind, set {i}": ["0.278 [0.158, 0.440]", "0.317 [0.213, 0.442]"] for i in range(17)})


def displayed(order_id: str, n: int) -> list[int]:
    base = list(range(n)) if order_id.startswith("rot") else list(range(n))[::-1]
    r = int(order_id[3:])
    return base[r:] + base[:r]


def synthetic_predictions(items: list[Item], seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for index, item in enumerate(items):
        n = len(item.options)
        for model, p_right in [*MODELS.items(), (HABIT_MODEL, None)]:
            for order_id in ORDERS:
                order = displayed(order_id, n)
                if p_right is None:
                    pick = order[0] if index % 2 == 0 else item.key
                else:
                    wrong = [i for i in range(n) if i != item.key]
                    pick = item.key if rng.random() < p_right else rng.choice(wrong)
                rows.append(
                    PredictionRecord(
                        item_id=item.id,
                        model=model,
                        condition="blind",
                        phrasing="original",
                        labels="latin",
                        protocol="sl",
                        reasoning="direct",
                        order=order,
                        order_id=order_id,
                        forced_slot=None,
                        key_slot=order.index(item.key),
                        n_options=n,
                        picked_slot=order.index(pick),
                        picked_option=pick,
                        correct=pick == item.key,
                        parse_status="ok",
                        raw_response="ABCD"[order.index(pick)],
                        input_tokens=1,
                        output_tokens=1,
                        latency_s=0.0,
                        region=None,
                        request_hash=f"{item.id}-{model}-{order_id}",
                        time="2025-01-01T00:00:00Z",
                    ).to_row()
                )
    return pd.DataFrame(rows)


def lexical_frame(items: list[Item]) -> pd.DataFrame:
    rows = []
    for i, item in enumerate(items):
        pick = item.key if i % 2 == 0 else (item.key + 1) % len(item.options)
        rows.append(
            {
                "item_id": item.id,
                "n_options": len(item.options),
                "key": item.key,
                "usable": True,
                "picked_option": pick,
                "correct": pick == item.key,
                "tie": False,
                "tied_options": [pick],
                "option_scores": [1.0 + j for j in range(len(item.options))],
                "option_match_refs": [f"ua-law-test art{j}" for j in range(len(item.options))],
                "match_score": 12.5,
                "match_act": "ua-law-test",
                "match_act_title": "Митний кодекс України",
                "match_ref": f"art{pick}",
                "match_issued": "2012-03-13",
                "match_title": f"Стаття {pick}. Митне оформлення",
                "match_snippet": "Митне оформлення здійснюється…",
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("html")
    acts = ["customs-code", "anticorruption"]
    items = [
        it
        for act in acts
        for it in load_customs(
            DATA / "ua-customs-exam" / "questions.json", parts=["legislation"], acts=[act]
        )[:6]
    ]
    # A stem that tries to close the data script: it must stay inert text.
    items[0] = Item(**{**items[0].__dict__, "question": items[0].question + " </script><b>x</b>"})
    write_items(tmp / "items.jsonl", items)
    predictions = synthetic_predictions(items)
    write_predictions(predictions, tmp / "predictions.parquet")
    result = gate(predictions, gate_model="gate-model", k=5)
    write_gate(tmp / "gate.json", result)
    (tmp / "baselines").mkdir()
    lexical_frame(items).to_parquet(tmp / "baselines" / "lexical.parquet")
    ids = [it.id for it in items]
    # constant_0 holds every key here: key position, a bank fact, never an item's leak; lexical_search
    # (Table 2's statute search) is right where lexical.parquet is: the same leak, one tag
    pd.DataFrame(
        {"strategy": ["longest"] * 12 + ["lexical_search"] * 12 + ["constant_0"] * 12, "item_id": ids * 3,
         "correct": [True, False] * 12 + [True] * 12}
    ).to_parquet(tmp / "baselines" / "picks.parquet")  # fmt: skip
    shown = pd.DataFrame({"strategy": ["longest", "лексичний пошук"], "accuracy": ["0.412", "0.380"]})
    write_tables(
        tmp / "analysis" / "tables",
        {
            "table2": Table("table2", "Table 2: Точність стратегій", shown, shown, "Chance is 0.25."),
            "gate": Table("gate", "Gate", pd.DataFrame(), pd.DataFrame({"k": ["5"], "retained": ["0.9"]})),
            "table3": Table("table3", "Table 3: wide", pd.DataFrame(), WIDE),
        },
    )
    (tmp / "analysis" / "figures").mkdir()
    Image.new("RGB", (64, 32), (30, 90, 160)).save(tmp / "analysis" / "figures" / "figure1.png")
    index = write_html_report(
        tmp / "report",
        items_path=tmp / "items.jsonl",
        predictions_path=tmp / "predictions.parquet",
        gate_path=tmp / "gate.json",
        baselines_dir=tmp / "baselines",
        analysis_dir=tmp / "analysis",
        title="Звіт blindmcq",
    )
    return {"index": index, "items": items, "gate": result, "tmp": tmp, "predictions": predictions}


def expected_leaks(built: dict) -> dict[str, list[str]]:
    """The leak tags of each item, counted here from the fixture's own construction."""
    items, predictions = built["items"], built["predictions"]
    groups = predictions.groupby(["item_id", "model"], observed=True)
    right = groups["correct"].sum()
    top_slot = groups["picked_slot"].agg(lambda s: s.value_counts().max())
    half = len(ORDERS) / 2
    out = {}
    for i, item in enumerate(items):
        tags = ["surface: longest"] if i % 2 == 0 else []  # picks.parquet: longest right on even items
        tags += ["lexical"] if i % 2 == 0 else []  # lexical_frame: the key on even items, no ties
        runs = [(right[(item.id, m)], top_slot[(item.id, m)]) for m in [*MODELS, HABIT_MODEL]]
        tags += [f"model: {m} (content)" for m, (r, _) in zip([*MODELS, HABIT_MODEL], runs, strict=True)
                 if r > half]  # fmt: skip
        out[item.id] = tags  # a position habit is the model's, not the item's: no tag
    return out


def page_data(index: Path) -> dict:
    text = index.read_text(encoding="utf-8")
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert raw, "no data script in the page"
    return json.loads(raw.group(1))


def test_page_embeds_every_item_with_gate_picks_lexical_and_lengths(built):
    index, items, result = built["index"], built["items"], built["gate"]
    data = page_data(index)
    assert [row["id"] for row in data["items"]] == [it.id for it in items]
    first = data["items"][0]
    assert first["question"].endswith("</script><b>x</b>")  # round-trips, yet never closed the script
    assert first["lengths"] == [chars(o) for o in items[0].options]
    assert first["gate"] == ("rejected" if items[0].id in result.rejected else "accepted")
    solved = dict(zip(result.counts["item_id"], result.counts["solved"], strict=True))
    assert all(row["solved"] == solved[row["id"]] for row in data["items"])
    picks = first["picks"]
    assert sorted(picks) == sorted([*MODELS, HABIT_MODEL])
    assert [c["o"] for c in picks["gate-model"]] == ORDERS
    assert sum(c["c"] for c in picks["gate-model"]) == solved[items[0].id]
    assert first["lexical"]["match_act_title"] == "Митний кодекс України"
    assert first["strategies"] == ["lexical_search", "longest"] and data["items"][1]["strategies"] == []
    assert data["gate"]["rule"] == result.describe_thresholds() and "N=4: k=5 of 8" in data["gate"]["rule"]
    html = index.read_text(encoding="utf-8")
    assert '<meta charset="utf-8">' in html
    assert "Точність стратегій" in html and "<td>лексичний пошук</td>" in html
    assert "src='figures/figure1.png'" in html and (index.parent / "figures" / "figure1.png").exists()
    assert "<a href='figures/figure1.png' target='_blank'" in html  # opens full size
    assert "<figcaption>Figure 1: how often each item is answered blind" in html  # titled, not "figure1"
    assert (index.parent / "assets" / "report.js").exists() and "http" not in html.split("<script")[0]


def test_page_tags_each_item_with_its_leak_types(built):
    data = page_data(built["index"])
    assert {row["id"]: row["leaks"] for row in data["items"]} == expected_leaks(built)
    first, second = data["items"][0], data["items"][1]
    assert first["leakRuns"][HABIT_MODEL] == "position habit" and second["leakRuns"][HABIT_MODEL] == "content"


def call(order_id: str, picked: int | None, slot: int | None, right: bool) -> dict:
    return {"o": order_id, "p": picked, "k": slot, "c": right, "s": "ok" if picked is not None else "refused"}


def test_model_leaks_tells_content_from_position_habit():
    from blindmcq.reporting.html import leak_tags, model_leaks

    # the key wherever it is shown: 5 of 8 right, spread over slots
    content = [call(o, 2, i % 4, i < 5) for i, o in enumerate(ORDERS)]
    assert model_leaks(content) == "content"
    # always slot 0: right only in the 2 orders that put the key there
    habit = [call(o, i % 4, 0, i in (1, 6)) for i, o in enumerate(ORDERS)]
    assert model_leaks(habit) == "position habit"
    # exactly half right is no majority; slot 0 in only 4 of 8 is no habit either
    half = [call(o, 1, i % 2, i < 4) for i, o in enumerate(ORDERS)]
    assert model_leaks(half) is None
    # one slot always, never right: no leak; refusals count in the denominator, never as a slot
    assert model_leaks([call(o, 3, 0, False) for o in ORDERS]) is None
    refused = [call(o, None, None, False) for o in ORDERS[:4]] + [call(o, 1, 0, True) for o in ORDERS[4:]]
    assert model_leaks(refused) is None
    tags, runs = leak_tags(["longest"], {"correct": True, "tie": True}, {"a": content, "b": habit, "c": half})
    # a tied lexical pick is no leak, and neither is a position habit (the run still says it)
    assert tags == ["surface: longest", "model: a (content)"]  # the tag names its model
    assert runs == {"a": "content", "b": "position habit"}
    assert leak_tags([], {"correct": True, "tie": False}, {}) == (["lexical"], {})
    # Table 2's lexical_search is the statute search: one tag, from either file
    assert leak_tags(["lexical_search"], {"correct": True, "tie": False}, {}) == (["lexical"], {})
    assert leak_tags(["lexical_search", "longest"], None, {}) == (["surface: longest", "lexical"], {})


def test_script_json_cannot_break_out_of_the_script_tag():
    text = script_json({"q": "</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"q": "</script><!-- & -->"}


def test_analysis_tables_are_the_table_objects_titles_rows_and_notes(built):
    """The page's tables come from ``tables.json`` (``Table.cells``), never from parsing Markdown."""
    tables = analysis_tables(built["tmp"] / "analysis")
    assert [t["title"] for t in tables] == ["Table 2: Точність стратегій", "Gate", "Table 3: wide"]
    assert tables[0]["columns"] == ["strategy", "accuracy"]
    assert tables[0]["rows"] == [["longest", "0.412"], ["лексичний пошук", "0.380"]]
    assert tables[0]["notes"] == ["Chance is 0.25."] and tables[1]["notes"] == []
    html = built["index"].read_text(encoding="utf-8")
    assert "<th>k</th><th>retained</th></tr></thead><tbody><tr><td>5</td><td>0.9</td></tr>" in html
    assert analysis_tables(built["tmp"]) == []  # no tables.json: the page says none were found


def test_missing_gate_names_the_file(built, tmp_path):
    tmp = built["tmp"]
    with pytest.raises(InputError, match=r"nope\.json"):
        write_html_report(
            tmp_path,
            items_path=tmp / "items.jsonl",
            predictions_path=tmp / "predictions.parquet",
            gate_path=tmp / "nope.json",
            baselines_dir=tmp / "baselines",
            analysis_dir=tmp / "analysis",
        )
    assert not (tmp_path / "index.html").exists()


# --- in the browser -------------------------------------------------------------------------------------


def rows(driver) -> list[list[str]]:
    script = (
        "return [...document.querySelectorAll('#items tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent));"
    )
    return driver.execute_script(script)


@pytest.mark.slow
def test_page_filters_sorts_opens_an_item_and_renders(built, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    items, result = built["items"], built["gate"]
    browser.get(built["index"].as_uri())
    assert browser.execute_script("return document.characterSet") == "UTF-8"
    assert len(rows(browser)) == len(items)

    Select(browser.find_element(By.ID, "f-bank")).select_by_value(items[-1].bank)
    shown = rows(browser)
    assert 0 < len(shown) < len(items) and {r[1] for r in shown} == {items[-1].bank}
    Select(browser.find_element(By.ID, "f-bank")).select_by_value("")

    Select(browser.find_element(By.ID, "f-gate")).select_by_value("rejected")
    assert sorted(r[0] for r in rows(browser)) == sorted(result.rejected)
    Select(browser.find_element(By.ID, "f-gate")).select_by_value("")

    browser.find_element(By.ID, "f-min").send_keys("4")  # the field holds "0": now "04"
    assert all(int(r[3].split("/")[0]) >= 4 for r in rows(browser))
    browser.find_element(By.ID, "f-min").clear()

    word = items[2].options[items[2].key].split()[0]
    browser.find_element(By.ID, "f-search").send_keys(word)
    found = [r[0] for r in rows(browser)]
    assert items[2].id in found and len(found) < len(items)
    browser.find_element(By.ID, "f-search").clear()
    browser.execute_script("document.getElementById('f-search').dispatchEvent(new Event('input'))")

    browser.find_element(By.CSS_SELECTOR, "th[data-key=solved]").click()
    counts = [int(r[3].split("/")[0]) for r in rows(browser)]
    assert counts == sorted(counts)

    target = items[1]
    browser.find_element(By.CSS_SELECTOR, f"#items tbody tr[data-id='{target.id}']").click()
    detail = browser.find_element(By.ID, "detail")
    assert detail.is_displayed()
    assert target.question in detail.text
    key = detail.find_element(By.CSS_SELECTOR, ".options li.key").text
    assert target.options[target.key] in key and "✓" in key
    assert len(detail.find_elements(By.CSS_SELECTOR, "table.picks tbody tr")) == len(MODELS) + 1
    assert len(detail.find_elements(By.CSS_SELECTOR, "table.picks thead th")) == len(ORDERS) + 2
    assert "Митний кодекс України" in detail.text

    shot = tmp_path / "page.png"
    assert browser.save_screenshot(str(shot))
    image = Image.open(shot).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    non_white = sum(n for n, c in colours if sum(c) < 3 * 245) / (image.width * image.height)
    assert len(colours) > 50 and non_white > 0.03, (len(colours), non_white)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


@pytest.mark.slow
def test_leak_filter_changes_the_visible_rows(built, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    items, rejected = built["items"], set(built["gate"].rejected)
    leaks = expected_leaks(built)
    browser.get(built["index"].as_uri())
    leak = Select(browser.find_element(By.ID, "f-leak"))
    # the options are the leak types present, in reading order: surface, lexical, models
    tags = [o.get_attribute("value") for o in leak.options]
    # (a position habit is the model's, not the item's: no filter for it)
    content = sorted({t for ts in leaks.values() for t in ts if t.startswith("model: ")})
    assert content and all(t.endswith(" (content)") for t in content)  # one tag per model, named
    assert tags == ["", "__any__", "__none__", "surface: longest", "lexical", *content]
    assert len(tags) == len(set(tags))

    def shown_ids() -> list[str]:
        return sorted(r[0] for r in rows(browser))

    for tag in tags[3:]:
        leak.select_by_value(tag)
        expected = sorted(i for i, t in leaks.items() if tag in t)
        assert shown_ids() == expected, tag
        assert 0 < len(expected) < len(items)  # the fixture makes every filter a real cut
        assert all(tag in r[7] for r in rows(browser))  # the leaks column shows what was filtered on
    leak.select_by_value("__none__")
    assert shown_ids() == sorted(i for i, t in leaks.items() if not t)
    leak.select_by_value("__any__")
    assert shown_ids() == sorted(i for i, t in leaks.items() if t)
    # with the gate filter: one model's content leaks the gate rejected
    leak.select_by_value(content[0])
    Select(browser.find_element(By.ID, "f-gate")).select_by_value("rejected")
    assert shown_ids() == sorted(i for i, t in leaks.items() if content[0] in t and i in rejected)
    count = browser.find_element(By.ID, "count").text
    assert count == f"{len(rows(browser))} of {len(items)} items"
    leak.select_by_value("")
    Select(browser.find_element(By.ID, "f-gate")).select_by_value("")
    assert len(rows(browser)) == len(items)
    # the first stem carries "</script><b>x</b>": shown as text in its row, never parsed into an element
    assert browser.execute_script("return document.querySelectorAll('#items b, #detail b').length") == 0
    first = next(r for r in rows(browser) if r[0] == items[0].id)
    assert first[-1].endswith("</script><b>x</b>")


def test_a_failed_call_with_missing_values_is_written_as_null_not_a_crash():
    """A failed call's pick, slot and correctness can be pandas' NA (nullable columns); the page data is
    JSON, where they are null (an audit with a failed call used to stop in the HTML step)."""
    from blindmcq.reporting.html import _plain, blind_picks

    frame = pd.DataFrame({
        "item_id": ["i1"], "model": ["m"], "condition": ["blind"], "order_id": ["rot0"],
        "phrasing": ["p"], "labels": ["l"], "protocol": ["sl"], "reasoning": ["direct"],
        "forced_slot": pd.array([pd.NA], dtype="Int64"),
        "picked_option": pd.array([pd.NA], dtype="Int64"), "picked_slot": pd.array([pd.NA], dtype="Int64"),
        "correct": pd.array([pd.NA], dtype="boolean"), "parse_status": ["error"],
    })  # fmt: skip
    assert _plain(pd.NA) is None
    calls = blind_picks(frame)["i1"]["m"]
    assert json.loads(json.dumps(calls)) == [{"o": "rot0", "p": None, "c": False, "s": "error", "k": None}]


@pytest.mark.slow
def test_header_rule_figures_at_natural_size_and_wide_tables_scroll(built, browser):
    """The explorer's header states the gate's per-N rule; a figure shows at its natural size (or the
    page's width) inside a link to the PNG; a wide table keeps each cell on one line and scrolls sideways
    in its own box instead of widening the page."""
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(built["index"].as_uri())
    note = browser.find_element(By.ID, "gate-note").text
    assert built["gate"].describe_thresholds() in note and "null" not in note and "undefined" not in note

    img = browser.find_element(By.CSS_SELECTOR, "#figures figure img")
    browser.execute_script("arguments[0].scrollIntoView()", img)
    browser.execute_script(
        "const i = arguments[0]; i.loading = 'eager'; return i.decode ? i.decode() : null;", img
    )
    natural, shown = browser.execute_script(
        "const i = arguments[0]; return [i.naturalWidth, i.getBoundingClientRect().width];", img
    )
    page = browser.execute_script("return document.querySelector('main').clientWidth")
    assert natural == 64 and abs(shown - min(natural, page)) <= 2, (natural, shown)  # not a thumbnail
    link = img.find_element(By.XPATH, "..")
    assert link.tag_name == "a" and link.get_attribute("href").endswith("figures/figure1.png")
    caption = browser.find_element(By.CSS_SELECTOR, "#figures figcaption").text
    assert caption.startswith("Figure 1:")

    wide = browser.find_element(By.XPATH, "//section[h3='Table 3: wide']")
    box = wide.find_element(By.CSS_SELECTOR, ".scroll")
    scroll_w, client_w = browser.execute_script(
        "return [arguments[0].scrollWidth, arguments[0].clientWidth];", box
    )
    assert scroll_w > client_w  # scrolls in its box
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 1280  # page does not
    cell = wide.find_element(By.CSS_SELECTOR, "tbody td")
    rects = browser.execute_script("return arguments[0].getClientRects().length", cell)
    height, line = browser.execute_script(
        "const c = arguments[0]; return [c.clientHeight, parseFloat(getComputedStyle(c).lineHeight) || 20];",
        cell,
    )
    assert rects == 1 and height < 2 * line, (height, line)  # the interval stays on one line


@pytest.fixture(scope="module")
def release_html(shipped_report) -> Path:
    """The HTML ``blindmcq report --from releases/default`` writes (the shipped run, no model called)."""
    assert shipped_report.returncode == 0, shipped_report.stderr[-2000:]
    return shipped_report.out / "html" / "index.html"


@pytest.mark.slow
def test_the_release_explorer_states_its_rule_tags_once_and_shows_figures_whole(release_html, browser):
    """The shipped run's page: the per-N rule in the header, one lexical tag (not also
    "surface: lexical_search"), model tags that name their model, four captioned figures linked to their
    PNG and none shrunk to a thumbnail, and Table 3's intervals on one line each."""
    from selenium.webdriver.common.by import By

    data = page_data(release_html)
    tags = {t for row in data["items"] for t in row["leaks"]}
    assert "lexical" in tags and "surface: lexical_search" not in tags and "model: content" not in tags
    models = {t for t in tags if t.startswith("model: ")}
    assert models and all(t.removeprefix("model: ").removesuffix(" (content)") in row["leakRuns"]
                          for row in data["items"] for t in row["leaks"] if t in models)  # fmt: skip
    browser.set_window_size(1400, 1000)
    browser.get(release_html.as_uri())
    note = browser.find_element(By.ID, "gate-note").text
    assert "N=4: k=5 of 8" in note and "null" not in note, note
    figures = browser.find_elements(By.CSS_SELECTOR, "#figures figure")
    assert len(figures) == 4
    page = browser.execute_script("return document.querySelector('main').clientWidth")
    for i, fig in enumerate(figures, start=1):
        img = fig.find_element(By.TAG_NAME, "img")
        browser.execute_script("arguments[0].loading = 'eager'; arguments[0].scrollIntoView()", img)
        browser.execute_script("return arguments[0].decode()", img)
        natural, shown = browser.execute_script(
            "return [arguments[0].naturalWidth, arguments[0].getBoundingClientRect().width]", img
        )
        assert natural > 0 and shown >= min(natural, page) - 40, (i, natural, shown, page)
        assert img.find_element(By.XPATH, "..").get_attribute("href").endswith(f"figures/figure{i}.png")
        assert fig.find_element(By.TAG_NAME, "figcaption").text.startswith(f"Figure {i}:")
    table3 = browser.find_element(By.XPATH, "//section[starts-with(h3, 'Table 3:')]")
    cell = table3.find_element(By.CSS_SELECTOR, "tbody td:nth-child(2)")
    assert "[" in cell.text
    assert browser.execute_script("return arguments[0].getClientRects().length", cell) == 1
    height, line = browser.execute_script(
        "const c = arguments[0]; return [c.clientHeight, parseFloat(getComputedStyle(c).lineHeight) || 20];",
        cell,
    )
    assert height < 2 * line, (height, line)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 1400
    omitted = browser.find_element(By.XPATH, "//section[starts-with(h3, 'Table 6:')]")
    assert not omitted.find_elements(By.TAG_NAME, "table") and "No data: only one value" in omitted.text


def test_an_options_length_on_the_page_is_table_2s_whitespace_normalised_length(built) -> None:
    """The explorer's "ch · w" beside each option and its key-minus-distractors are measured as Table 2's
    ``longest`` and the bank profile measure them (``surface.chars``/``words``), not as the raw text."""
    item = Item("ws-1", "ws", "b", 1, "?", ("a  b\n c", " abc ", "a\u00a0\u00a0bc d"), 0)
    [row] = item_rows([item], built["gate"], {}, {}, {})
    assert row["lengths"] == [5, 3, 6] and row["words"] == [3, 1, 3]
