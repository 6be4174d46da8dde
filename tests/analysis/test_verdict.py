"""The bank's verdict rests on Table 2 alone: the same sentence whatever models the panel holds, the same in
the pipeline's report and the audit, and a non-significant result says what the sample could detect."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from blindmcq.analysis.findings import findings
from blindmcq.analysis.frame import read_analysis_frame
from blindmcq.analysis.metrics import analyze
from blindmcq.analysis.verdict import bank_verdict, content_family, content_sentence, detectable_accuracy

RELEASE = Path(__file__).resolve().parents[2] / "releases" / "default"


def _summary(rows: list[tuple[str, float, int]], chance: float = 0.25) -> pd.DataFrame:
    out = []
    for strategy, k, n in rows:
        acc = k / n
        half = 1.96 * np.sqrt(acc * (1 - acc) / n)
        out.append({"strategy": strategy, "n": n, "n_correct": k, "accuracy": acc, "ci_low": acc - half,
                    "ci_high": acc + half, "chance": chance})  # fmt: skip
    return pd.DataFrame(out)


@pytest.mark.parametrize(
    ("n", "chance", "alpha"), [(60, 0.25, 0.0125), (340, 0.25, 0.0125), (200, 0.1, 0.05)]
)
def test_the_detectable_accuracy_has_the_stated_power(n: int, chance: float, alpha: float) -> None:
    acc = detectable_accuracy(n, chance, alpha)
    k_crit = int(binom.isf(alpha, n, chance)) + 1
    assert binom.sf(k_crit - 1, n, chance) <= alpha  # the test's level holds at chance
    assert binom.sf(k_crit - 1, n, acc) == pytest.approx(0.8, abs=1e-6)  # 80% power at that accuracy
    assert chance < acc < 1


def test_holm_runs_over_the_option_text_strategies_only() -> None:
    rows = [("constant_0", 100, 340), ("constant_1", 70, 340), ("longest", 103, 340),
            ("shortest", 96, 340), ("most_words", 107, 340), ("lexical_search", 135, 340)]  # fmt: skip
    summary = _summary(rows)
    family = content_family(summary)
    assert list(family["strategy"]) == ["longest", "shortest", "most_words", "lexical_search"]
    assert (family["holm"] >= family["p"]).all() and family["holm"].max() <= 1
    sentence = content_sentence(summary)
    assert "`lexical_search`" in sentence and "Holm over the 4 option-text strategies" in sentence
    assert sentence.endswith("The option texts alone give the key away.")


def test_no_leak_says_what_the_sample_could_have_detected() -> None:
    sentence = content_sentence(_summary([("longest", 16, 60), ("shortest", 14, 60)]))
    assert "not shown to be above chance" in sentence
    assert "at 60 items the test would detect an accuracy of" in sentence and "80% power" in sentence
    assert "give the key away" not in sentence


def test_the_bank_paragraph_does_not_depend_on_the_panel() -> None:
    """The committed run's predictions, analysed with every model, with three dropped, and with one
    added (a copy of a model under a new name): the bank's paragraph is the same sentence each time."""
    predictions = read_analysis_frame(RELEASE / "results/predictions/predictions.parquet")
    summary = pd.read_csv(RELEASE / "results/baselines/summary.csv")
    bank = bank_verdict(summary, {4: [103, 73, 64, 100]})
    models = sorted(predictions["model"].unique())
    extra = predictions[predictions["model"] == models[0]].assign(model="imported-copy")
    panels = {
        "all": predictions,
        "fewer": predictions[~predictions["model"].isin(models[:3])],
        "more": pd.concat([predictions, extra], ignore_index=True),
    }
    openings = {}
    for name, frame in panels.items():
        lines = findings(analyze(frame), model=models[-1], bank=bank)
        openings[name] = lines[0]
        assert lines[2].startswith("**The models.**")  # what the models show comes after
    assert openings["all"] == openings["fewer"] == openings["more"]
    assert openings["all"].startswith("**The bank.** The best option-text strategy, `lexical_search`")
    assert "The option texts alone give the key away." in openings["all"]


NULL_CLAIMS = (
    "No model answers blind above chance",
    "No other model answers the accepted items above chance",
    "no surface strategy finds the key",
)


def test_every_null_result_of_the_opening_states_what_the_sample_could_detect() -> None:
    """The committed run gated by its own gate file: each sentence that reads a non-significant result
    carries the smallest accuracy its test detects with 80% power, at the level that test used (Holm's
    first step over 7 models; the 95% interval's lower side; Holm over 8 strategies and both directions),
    and "the gate carries over" is no longer concluded from non-significance."""
    from blindmcq.analysis.gate import read_gate
    from blindmcq.analysis.leaks import surface_past_gate

    predictions = read_analysis_frame(RELEASE / "results/predictions/predictions.parquet")
    g = read_gate(RELEASE / "results/gate/gate.json")
    picks = pd.read_parquet(RELEASE / "results/baselines/picks.parquet")
    past = surface_past_gate(picks, g)
    lines = findings(analyze(predictions, gate=g), model="gemma3-270m", surface_gate=past)
    text = " ".join(lines)
    sentences = [s for s in text.split(". ") if any(claim in s for claim in NULL_CLAIMS)]
    assert len(sentences) == 3, sentences
    expected = [detectable_accuracy(60, 0.25, 0.05 / 7), detectable_accuracy(36, 0.25, 0.025),
                detectable_accuracy(36, 0.25, 0.05 / 16)]  # fmt: skip
    for sentence, acc in zip(sentences, expected, strict=True):
        assert f"would detect an accuracy of {acc:.3f} or more with 80% power" in sentence, sentence
    assert "and the gate carries over to them" not in text
    assert "whether the gate carries over to them wholly, this sample cannot decide" in text


def test_a_balanced_key_spread_states_the_imbalance_it_could_detect() -> None:
    """No imbalance shown: the sentence gives the smallest Cohen's w the chi-square detects with 80%
    power, which has that power (statsmodels), and as one slot's share of the keys, which is that w."""
    from statsmodels.stats.power import GofChisquarePower

    from blindmcq.analysis.verdict import position_sentence

    balanced = position_sentence({4: [26, 24, 25, 25]})
    assert balanced.startswith("No key-position imbalance is shown")
    w = float(balanced.split("Cohen's w ")[1].split()[0])
    share = float(balanced.split("one slot holding ")[1].split()[0])
    assert "at the 100 items with N=4 that test would detect" in balanced and "80% power" in balanced
    power = GofChisquarePower().power(effect_size=w, nobs=100, alpha=0.05, n_bins=4)
    assert power == pytest.approx(0.8, abs=0.01)
    others = (1 - share) / 3
    assert np.sqrt(((share - 0.25) ** 2 + 3 * (others - 0.25) ** 2) / 0.25) == pytest.approx(w, abs=0.002)
    uneven = position_sentence({4: [103, 73, 64, 100]})
    assert uneven.startswith("The keys sit unevenly") and "Cohen's w" not in uneven
