import numpy as np
from scipy import stats as sps

from blindmcq.analysis import analyze, bank_blind_accuracy, write_figures
from blindmcq.analysis import figures as f

PNG = b"\x89PNG\r\n\x1a\n"


def test_figure1_draws_observed_beside_chance(analysis):
    fig = f.figure_1(analysis.gate)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    observed = np.bincount(analysis.gate.counts["solved"], minlength=9)
    expected = len(analysis.gate.counts) * sps.binom.pmf(np.arange(9), 8, 0.25)
    assert np.allclose(heights[:9], observed) and np.allclose(heights[9:18], expected)
    assert "Binomial(8, 1/4)" in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


def test_write_figures_all_four(tmp_path, analysis, predictions, items, bank):
    short = [type(it)(**{**it.__dict__, "options": tuple(o[:33] for o in it.options)}) for it in bank[-50:]]
    acc = bank_blind_accuracy({"customs": predictions, "short": predictions})
    paths = write_figures(tmp_path, analysis, banks={"customs": items, "short": short}, bank_accuracy=acc)
    assert sorted(paths) == ["figure1", "figure2", "figure3", "figure4"]
    for p in paths.values():
        assert p.read_bytes()[:8] == PNG and p.stat().st_size > 10_000
    assert not list(tmp_path.glob(".*.tmp"))


def test_one_model_without_gate_still_renders(tmp_path, predictions):
    a = analyze(predictions[predictions["model"] == "good"])
    fig2 = f.figure_2(a)
    ax = fig2.axes[0]
    # one model: the figure says so and draws what one model allows (its point against chance)
    assert "(one model)" in ax.get_title()
    assert any("one model (good)" in t.get_text() and "3 or more" in t.get_text() for t in ax.texts)
    assert any(line.get_xydata().size for line in ax.lines)
    paths = write_figures(tmp_path, a)
    assert all(p.read_bytes()[:8] == PNG for p in paths.values())
    fig1 = f.figure_1(None)
    assert any("No data" in t.get_text() for t in fig1.axes[0].texts)


def test_chance_is_written_as_the_fraction_it_is() -> None:
    assert f.chance_text(1 / 16) == "1/16" and f.chance_text(0.25) == "1/4"
    assert f.chance_text(0.2375) == "0.237"  # a mixture of option counts: 3 significant digits


def test_figure4_measures_option_length_as_the_bank_profile_does(bank):
    """Figure 4's lengths are the profile's (``surface.chars``, whitespace collapsed): an option with a
    line break and double spaces is as long as its one-line form."""
    from blindmcq.auditing.profile import profile_bank

    spaced = [type(it)(**{**it.__dict__, "options": tuple(o.replace(" ", "  \n") for o in it.options)})
              for it in bank[:20]]  # fmt: skip
    fig = f.figure_4({"spaced": spaced, "plain": bank[:20]}, None)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    longest = int(profile_bank(bank[:20])["option_chars"]["max"])
    assert labels == [f"spaced (max {longest} chars)", f"plain (max {longest} chars)"]
    assert fig.axes[0].get_lines()[0].get_xdata().tolist() == sorted(
        len(" ".join(o.split())) for it in bank[:20] for o in it.options
    )
