"""Every figure of the default run that the README quotes is the one the run wrote.

Cheap on purpose: it reads the shipped run's ``reports/metrics.json`` (``releases/default``, which
``tests/test_bundle.py`` checks is the committed run) and the README's text, so a ``make run`` here, on a
CPU whose model scores differ in the last bits, does not enter; once a run that changes a figure is
exported as the release, this fails naming it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# README phrase (a regex with one group: the figure as printed) -> metric key -> how it is printed
QUOTED = [
    (r"the (\d+) legislation items", "corpus/n_items", "{:.0f}"),
    (r"habit (\d\.\d{3}) =", "habit/all", "{:.3f}"),
    (r"= blind accuracy\s+(\d\.\d{3})", "blind_acc/all", "{:.3f}"),
    (r"excess \+(\d\.\d{3})", "excess/all", "{:.3f}"),
    (r"gives exactly (\d\.\d{3}) position-free", "position_free/accepted", "{:.3f}"),
    (r"the gate rejects (\d+) of the", "gate/n_rejected", "{:.0f}"),
    (r"rejects \d+ of the (\d+) items", None, None),  # accepted + rejected, checked below
    (r"0\.\d{3} position-free; cloze scoring, position-free by construction, gives it (\d\.\d{3}) blind",
     "panel/gemma3-270m-cloze/blind_acc/all", "{:.3f}"),
    (r"lexical search answers (\d\.\d{3}) blind", "panel/lexical/blind_acc/all", "{:.3f}"),
    (r"exact binomial on items, p (\d\.\d{3})\); on all 340", "panel/lexical/blind_p_holm/all", "{:.3f}"),
    (r"`longest` falls from (\d\.\d{3})", "panel/longest/blind_acc/all", "{:.3f}"),
    (r"`longest` falls from \d\.\d{3} on all items to (\d\.\d{3})", "panel/longest/blind_acc/accepted",
     "{:.3f}"),
    (r"`most-words` from (\d\.\d{3})", "panel/most-words/blind_acc/all", "{:.3f}"),
    (r"`most-words` from \d\.\d{3} to (\d\.\d{3})", "panel/most-words/blind_acc/accepted", "{:.3f}"),
    (r"rejected items they answer (\d\.\d{3})", "panel/longest/blind_acc/rejected", "{:.3f}"),
    (r"rejected items they answer \d\.\d{3} and (\d\.\d{3})", "panel/most-words/blind_acc/rejected",
     "{:.3f}"),
    (r"key on (\d\.\d{3}) of the", "table2/longest", "{:.3f}"),
    (r"of the (\d+) items, the option", "corpus/n_items", "{:.0f}"),
    (r"most words on (\d\.\d{3})", "table2/most_words", "{:.3f}"),
    (r"finds it on (\d\.\d{3})", "table2/lexical_search", "{:.3f}"),
    (r"a seeded sample of (\d+) items", None, None),  # the probe sample: accepted + rejected
    (r"`longest` (\d\.\d{3}) before", "rewrite/longest/blind_before_acc", "{:.3f}"),
    (r"`longest` \d\.\d{3} before, (\d\.\d{3}) after", "rewrite/longest/blind_after_acc", "{:.3f}"),
    (r"Lexical search goes from (\d\.\d{3})", "rewrite/lexical/blind_before_acc", "{:.3f}"),
    (r"Lexical search goes from \d\.\d{3} to (\d\.\d{3})", "rewrite/lexical/blind_after_acc", "{:.3f}"),
    (r"raw cloze, which favours short options, rises from (\d\.\d{3})",
     "rewrite/gemma3-270m-cloze-raw/blind_before_acc", "{:.3f}"),
    (r"rises from \d\.\d{3} to (\d\.\d{3}) \(14", "rewrite/gemma3-270m-cloze-raw/blind_after_acc", "{:.3f}"),
    (r"\((\d+) items up, \d+ down, Holm p", "rewrite/gemma3-270m-cloze-raw/blind_after_items_up", "{:.0f}"),
    (r"\(\d+ items up, (\d+) down, Holm p", "rewrite/gemma3-270m-cloze-raw/blind_after_items_down", "{:.0f}"),
    (r"items up, \d+ down, Holm p (\d\.\d{3})", "rewrite/gemma3-270m-cloze-raw/blind_after_sign_p_holm",
     "{:.3f}"),
    (r"\((\d+) items up, \d+ down; exact sign test", "rewrite/longest/blind_after_items_up", "{:.0f}"),
    (r"\(\d+ items up, (\d+) down; exact sign test", "rewrite/longest/blind_after_items_down", "{:.0f}"),
    (r"exact sign test on items, Holm p (\d\.\d{3})\)", "rewrite/longest/blind_after_sign_p_holm", "{:.3f}"),
    (r"and differ, it is right on (\d\.\d{3})", "lexical_beyond_length/acc", "{:.3f}"),
    (r"on the (\d+) items where its pick and the option with most", "lexical_beyond_length/n", "{:.0f}"),
    (r"log-likelihood under cloze is (-\d\.\d{3}) before", "rewrite/fluency_before", "{:.3f}"),
    (r"under cloze is -\d\.\d{3} before and\s(-\d\.\d{3}) after", "rewrite/fluency_after", "{:.3f}"),
    (r"of the (\d+) items they belong to", "rewrite/fluency_items", "{:.0f}"),
    (r"belong to, (\d+) read more fluent", "rewrite/fluency_up", "{:.0f}"),
    (r"more fluent on average, (\d+) less", "rewrite/fluency_down", "{:.0f}"),
    (r"the (\d+) changed distractors", "rewrite/fluency_n", "{:.0f}"),
    (r"sign test over items, p (\d\.\d{3})\)", "rewrite/fluency_sign_p", "{:.3f}"),
    (r"cloze per character from (\d\.\d{3})", "rewrite/gemma3-270m-cloze/blind_before_acc", "{:.3f}"),
    (r"cloze per character from \d\.\d{3} to (\d\.\d{3})", "rewrite/gemma3-270m-cloze/blind_after_acc",
     "{:.3f}"),
    (r"AnswerPool \(pools of 5 items, a fifth of the answers deleted\) on (\d+) of them", "answerpool/items",
     "{:.0f}"),
]  # fmt: skip


@pytest.fixture(scope="module")
def readme() -> str:
    return " ".join((REPO / "README.md").read_text(encoding="utf-8").split())  # line breaks as spaces


@pytest.fixture(scope="module")
def metrics() -> dict[str, float]:
    shipped = REPO / "releases" / "default" / "reports" / "metrics.json"
    return json.loads(shipped.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("pattern", "key", "fmt"), QUOTED, ids=[q[0] for q in QUOTED])
def test_quoted_figure_is_the_runs(
    readme: str, metrics: dict, pattern: str, key: str | None, fmt: str | None
) -> None:
    match = re.search(pattern, readme)
    assert match, f"README no longer quotes /{pattern}/: update QUOTED in tests/test_readme.py"
    if key is None:
        want = metrics["gate/n_accepted"] + metrics["gate/n_rejected"]
        fmt = "{:.0f}"
    else:
        want = metrics[key]
    said = match.group(1)
    assert said == fmt.format(want), f"README says {said}, the shipped metrics.json has {key} = {want}"


# README claim -> what must hold in reports/metrics.json for it to stand (alpha 0.05 after the correction
# the sentence names); a run that changes a conclusion fails here, not only one that changes a figure
CLAIMS = [
    ("`longest` 0.250 before, 0.050 after, from chance to below it",
     lambda m: min(m["rewrite/longest/blind_before_p_above"], m["rewrite/longest/blind_before_p_below"])
     >= 0.05
     and m["rewrite/longest/blind_after_p_below"] < 0.05
     and m["rewrite/longest/blind_after_sign_p_holm"] < 0.05),
    ("Holm p 0.064: not significant after the correction",
     lambda m: m["rewrite/gemma3-270m-cloze-raw/blind_after_sign_p_holm"] >= 0.05),
    ("Lexical search goes from 0.400 to 0.417 and cloze per character from 0.283 to 0.283, no change",
     lambda m: m["rewrite/lexical/blind_after_sign_p_holm"] >= 0.05
     and m["rewrite/gemma3-270m-cloze/blind_after_sign_p_holm"] >= 0.05),
    ("The rewritten distractors do not read worse than before",
     lambda m: m["rewrite/fluency_sign_p"] >= 0.05
     or m["rewrite/fluency_after"] > m["rewrite/fluency_before"]),
    ("no Table 2 strategy finds the key on the accepted items above chance",
     lambda m: m["surface_gate/accepted/n_above"] == 0),
    ("binomial on items against chance, p 0.051; Table 2's note), not shown above chance",
     lambda m: m["lexical_beyond_length/p_above"] >= 0.05),
    ("above chance by its own 95% interval, but not after Holm over the 7 models scanned",
     lambda m: m["panel/lexical/blind_lo/all"] > 0.25
     and all(v >= 0.05 for k, v in m.items() if k.endswith("blind_p_holm/all"))),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "holds"), CLAIMS, ids=[c[0][:40] for c in CLAIMS])
def test_quoted_claim_is_supported_by_its_test(readme: str, metrics: dict, sentence: str, holds) -> None:
    assert sentence in readme, f"README no longer says {sentence!r}: update CLAIMS in tests/test_readme.py"
    assert holds(metrics), f"the committed run no longer supports: {sentence!r}"


def test_the_quoted_run_names_its_command(readme: str) -> None:
    assert "`make run`, then `dvc metrics show`" in readme
