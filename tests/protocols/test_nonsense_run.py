"""NonsenseQA end to end with the constant-slot-A heuristic: its accuracy is the share of keys in slot A."""

from __future__ import annotations

import pandas as pd
import pytest

import blindmcq.tasks.nonsense as nr
from blindmcq.answers.predictions import read_predictions
from blindmcq.cli import nonsense as nonsense_cli
from blindmcq.config.files import load_groups, load_model_file
from blindmcq.config.schema import NonsenseSettings, model_config, typed
from blindmcq.datasets.nonsense import generate_nonsenseqa
from blindmcq.errors import ConfigError

WORDS = [f"слово{chr(0x430 + i)}{j}" for i in range(20) for j in range(5)]
N = 40
CONSTANT_A = model_config(load_model_file("constant-a"))  # typed where it enters, as the command does
CONFIGS = load_groups(nr.NONSENSE_GROUPS)  # what `blindmcq nonsense` reads


def run(tmp_path, out=True, **settings) -> pd.DataFrame:
    """``run_nonsense`` with these settings (``NonsenseSettings`` fields, typed as the command types them)."""
    typed_settings = typed(NonsenseSettings, {"n_test": N, "seed": 1, "n_shots": 4, **settings})
    return nr.run_nonsense(
        CONSTANT_A, typed_settings, configs=CONFIGS,
        cache_path=tmp_path / "cache.sqlite", out_dir=tmp_path / "out" if out else None,
        words=WORDS, progress=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def rot0(tmp_path_factory) -> tuple[pd.DataFrame, object]:
    tmp = tmp_path_factory.mktemp("rot0")
    return run(tmp, orders=["rot0"]), tmp


def drawn_in_a() -> int:
    return sum(item.key == 0 for item in generate_nonsenseqa(1, n_test=N, words=WORDS).test)


def test_accuracy_is_the_share_of_keys_in_slot_a(rot0) -> None:
    df, _ = rot0
    assert len(df) == 2 * 4 * N and set(df["order_id"]) == {"rot0"}
    summary = nr.summarise(df).set_index(["protocol", "skew"])
    expected = {"all_a": N, "a70": round(0.7 * N), "uniform": N // 4, "none": drawn_in_a()}
    for protocol in ("sl", "md"):
        for skew, in_a in expected.items():
            row = summary.loc[(protocol, skew)]
            assert (row["n"], row["correct"]) == (N, in_a), (protocol, skew)
            assert row["key_rate_a"] == in_a / N and row["pick_rate_a"] == 1.0
    assert summary.loc[("sl", "all_a"), "ci_low"] > 0.9
    assert summary.loc[("sl", "uniform"), "p_above_chance"] > 0.4


def test_drawn_keys_keep_every_run_at_the_drawn_share(tmp_path) -> None:
    df = run(tmp_path, out=False, orders=["rot0"], keys="drawn", runs=[("sl", "all_a"), ("md", "uniform")])
    per_run = df.groupby(["protocol", "setting"])["correct"].sum()
    assert per_run.to_dict() == {
        ("md", "fewshot=uniform"): drawn_in_a(),
        ("sl", "fewshot=all_a"): drawn_in_a(),
    }


def test_a_skew_pays_in_every_order_and_drawn_keys_balance_it(tmp_path) -> None:
    """keys=skew places each order's keys so the skew holds where they are shown (it used to rotate the
    keys through every slot, so a pattern the examples reveal could never pay under the default orders);
    keys=drawn over all orders balances the key, and a constant scores chance."""
    df = run(tmp_path, out=False, runs=[("sl", "all_a"), ("md", "a70")])
    summary = nr.summarise(df).set_index("protocol")
    assert (summary["n"] == 8 * N).all() and (summary["n_orders"] == 8).all()
    assert summary.loc["sl", "accuracy"] == 1.0 and summary.loc["sl", "key_rate_a"] == 1.0
    assert summary.loc["md", "accuracy"] == pytest.approx(round(0.7 * N) / N)
    assert summary.loc["sl", "p_holm"] < 0.001
    drawn = nr.summarise(run(tmp_path, out=False, keys="drawn", runs=[("sl", "all_a"), ("md", "all_a")]))
    assert (drawn["accuracy"] == 0.25).all()
    assert drawn["order_variance"].round(6).tolist() == drawn["order_variance"].round(6).tolist()[:1] * 2


def test_p_values_are_item_level_so_a_consistent_null_picker_is_not_significant(tmp_path) -> None:
    """A picker that ignores the question but answers each item the same way in all 8 orders: the 8
    calls of an item are one observation, so its p-value is that of the items, not of 8x as many calls."""
    df = run(tmp_path, out=False, keys="drawn", runs=[("sl", "uniform")])
    right_items = set(df.loc[df["order_id"] == "rot0"].sample(frac=0.4, random_state=0)["item_id"])
    df["correct"] = df["item_id"].isin(right_items)  # 40% of items right in every order
    row = nr.summarise(df).iloc[0]
    from scipy import stats as sps

    calls = sps.binomtest(int(df["correct"].sum()), len(df), 0.25, alternative="greater").pvalue
    items = sps.binomtest(len(right_items), N, 0.25, alternative="greater").pvalue
    assert row["items"] == N and calls < 1e-6
    assert row["p_above_chance"] == pytest.approx(items, rel=0.2)


def test_outputs_are_written_and_consistent(rot0) -> None:
    df, tmp = rot0
    out = tmp / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "nonsenseqa.md", "nonsenseqa.png", "nonsenseqa_results.csv", "nonsenseqa_variance.csv",
        "predictions.parquet",
    ]  # fmt: skip
    stored = read_predictions(out / "predictions.parquet")
    assert len(stored) == len(df) and stored["correct"].sum() == df["correct"].sum()
    results = pd.read_csv(out / "nonsenseqa_results.csv")
    assert results[["protocol", "skew"]].values.tolist()[:4] == [
        ["sl", "all_a"],
        ["sl", "a70"],
        ["sl", "uniform"],
        ["sl", "none"],
    ]
    text = (out / "nonsenseqa.md").read_text(encoding="utf-8")
    # 40 items, each answered the same way: the item-level interval is the beta one at 40, 0.025 ** (1/40)
    assert f"{0.025 ** (1 / 40):.3f}" == "0.912"
    assert "| constant-a | SL | all_a | 40 | 1.000 [0.912, 1.000] |" in text
    assert "few-shot `all_a`: SL 1.000 [0.912, 1.000], above chance (item-level, Holm p" in text
    assert "(chance 0.25); MD 1.000" in text
    assert (out / "nonsenseqa.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_same_config_same_outputs(rot0, tmp_path) -> None:
    _, first = rot0
    run(tmp_path, orders=["rot0"])
    for name in ("nonsenseqa.md", "nonsenseqa_results.csv", "nonsenseqa.png"):
        assert (first / "out" / name).read_bytes() == (tmp_path / "out" / name).read_bytes(), name


def test_a_failure_while_rendering_writes_nothing(tmp_path, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(nr, "figure", broken)
    with pytest.raises(RuntimeError, match="figure failed"):
        run(tmp_path, orders=["rot0"], runs=[("sl", "all_a")])
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("kwargs", "key"), [
    ({"runs": [("sl", "most_a")]}, "protocol.fewshot"),
    ({"runs": [("xl", "all_a")]}, "protocol"),
    ({"runs": []}, "runs"),
    ({"keys": "sorted"}, "keys"),
    ({"orders": ["rot9"]}, "orders"),
])  # fmt: skip
def test_bad_settings_name_the_key(tmp_path, kwargs: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        run(tmp_path, out=False, **kwargs)


def test_cli_runs_and_prints_the_section(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(nr, "generate_nonsenseqa", lambda seed, n_test, words=None: generate_nonsenseqa(
        seed, n_test=n_test, words=WORDS))  # fmt: skip
    code = nonsense_cli.main([
        "--model", "constant-a", "--n-test", "12", "--orders", "rot0", "--runs", "sl:all_a,md:all_a",
        "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c.sqlite"),
    ])  # fmt: skip
    assert code == 0
    assert "| constant-a | MD | all_a | 12 | 1.000" in capsys.readouterr().out


class Echo:
    name = "echo"

    def __init__(self, text: str) -> None:
        self.text = text

    def complete(self, request):
        from blindmcq.backends.base import ModelResponse

        return ModelResponse(text=self.text)


def test_base_model_generation_is_cut_at_the_first_blank_line() -> None:
    from blindmcq.backends.base import ModelRequest

    invented = " правильний варіант — «слово».\n\nПитання: нове?\n- а\nОстаточна відповідь: а"
    backend = nr.UntilBlankLine(Echo(invented))
    assert backend.name == "echo:until-blank-line"  # its own cache keys
    assert (
        backend.complete(ModelRequest(model="m", system=None, user="q")).text
        == " правильний варіант — «слово»."
    )
    scored = ModelRequest(model="m", system=None, user="q", choices=("A", "B"))
    assert backend.complete(scored).text == invented  # scoring answers are left alone


def test_a_call_without_a_pick_counts_as_not_picking_a(rot0) -> None:
    df, _ = rot0
    part = df[(df["protocol"] == "md") & (df["setting"] == "fewshot=all_a")].copy()
    part.loc[part.index[:10], ["picked_slot", "parse_status", "correct"]] = [None, "uncertain", False]
    row = nr.summarise(part).iloc[0]
    assert row["pick_rate_a"] == row["accuracy"] == (N - 10) / N
    assert row["uncertain_rate"] == 10 / N


def test_a_base_model_under_md_is_cued_with_the_answer_heading_and_cut_at_a_blank_line() -> None:
    from blindmcq.backends.local import LocalBackend

    model = model_config(load_model_file("gemma3-270m"))  # no weights are loaded to name the backend
    cfg, backend = nr._base_model_md(model, "uk")
    assert cfg.answer_prefix == "\nОстаточна відповідь:" and cfg.name == model.name
    assert isinstance(backend, nr.UntilBlankLine)
    written = {**load_model_file("gemma3-270m"), "answer_prefix": "\nОстаточна відповідь:"}
    cued = LocalBackend(model_config(written))
    assert backend.name == f"{cued.name}:until-blank-line"
    assert cued.name != LocalBackend(model).name  # the cue is in the cache key
