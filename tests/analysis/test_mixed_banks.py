"""A real bank with a third each of 3-, 4- and 5-option items, run through
probe -> gate -> analyze in code with the heuristic models of ``conf/model``.

The committed sample (150 customs items, tests/fixtures/stats) always runs; the whole customs bank
(its 2,949 keyed items) runs when the shared data is present.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from mixed_bank import mixed_records, read_records, to_items
from omegaconf import OmegaConf

from blindmcq.analysis import Baseline, analyze, build_tables, gate
from blindmcq.config.files import load_label_schemes
from blindmcq.config.schema import Condition
from blindmcq.datasets.items import Item
from blindmcq.wiring.probe import probe_items


def params_for(repo_root: Path, model: str, cache: Path) -> dict:
    with initialize_config_dir(config_dir=str(repo_root / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=[f"model={model}", f"probe.cache={cache}"])
    return OmegaConf.to_container(cfg, resolve=True)


def run_bank(items: list[Item], repo_root: Path, cache: Path, *, full: bool = True) -> pd.DataFrame:
    """The random model blind on every order (and full), the always-first model on forced placement."""
    random_cond = Condition(name="t", conditions=["blind", "full"] if full else ["blind"],
                            blind_orders="all", full_orders=["rot0"], forced=False)  # fmt: skip
    first_cond = Condition(name="t", conditions=["blind"], blind_orders=["rot0"], full_orders=[],
                           forced=True)  # fmt: skip
    schemes = load_label_schemes(repo_root / "conf")
    random_params = params_for(repo_root, "random", cache)
    first_params = params_for(repo_root, "constant-a", cache)
    parts = [
        probe_items(random_params, items, label_schemes=schemes, condition=random_cond),
        probe_items(first_params, items, label_schemes=schemes, condition=first_cond),
    ]
    return pd.concat(parts, ignore_index=True)


def check_bank(items: list[Item], predictions: pd.DataFrame, excess_tolerance: float):
    mean_inv = float(np.mean([1 / it.n_options for it in items]))
    g = gate(predictions, gate_model="random")
    assert g.thresholds == {3: 5, 4: 5, 5: 5} and not g.untestable
    everything = Baseline(orders="all")
    a = analyze(predictions, gate=g, base=everything, headline_set="all", detail_set="all")
    s = a.summary.query("set == 'all'").set_index("model")
    rnd = s.loc["random"]
    # the uniform picker has no excess over its habit, and its chance is the item mean of 1/N
    assert abs(rnd["excess"]) <= excess_tolerance, rnd["excess"]
    assert rnd["chance"] == pytest.approx(mean_inv)
    assert rnd["blind_ci"] == "item-level" and 0 <= rnd["blind_lo"] < rnd["blind_acc"] < rnd["blind_hi"] <= 1
    # the always-first picker scores exactly the bank's mean of 1/N with the key forced everywhere
    f = a.forced.query("set == 'all'").set_index("model").loc["constant-a"]
    assert f["position_free"] == pytest.approx(mean_inv, abs=1e-12)
    assert f["sum"] == pytest.approx(1.0) and f["pf_lo"] < mean_inv < f["pf_hi"]
    # the gate table expects the mixture of Binomial(2N, 1/N), and says so
    tables = build_tables(a)
    assert tables["gate"].frame["expected"].sum() == pytest.approx(len(items))
    assert "Expected, redrawing picker: mixture of Binomial(2N, 1/N)" in tables["gate"].shown.columns
    assert "each item's own N" in tables["gate"].note and "N=3: k=5 of 6" in tables["gate"].note
    assert "computed per N and combined" in tables["table3"].note
    by_n = a.by_n.query("set == 'all' and model == 'random'")
    assert sorted(by_n["n_options"]) == [3, 4, 5] and by_n["weight"].sum() == pytest.approx(1.0)
    return rnd


def test_committed_mixed_sample_through_probe_gate_analyze(tmp_path: Path, repo_root: Path) -> None:
    items = to_items(read_records())
    assert {it.n_options for it in items} == {3, 4, 5} and len(items) == 150
    predictions = run_bank(items, repo_root, tmp_path / "cache.sqlite")
    # 150 items x 8 orders on average: the tolerance is three standard errors of the blind accuracy
    blind = predictions.query("model == 'random' and condition == 'blind'")
    se = float(np.sqrt((blind["correct"].mean() * (1 - blind["correct"].mean())) / len(blind)))
    rnd = check_bank(items, predictions, excess_tolerance=3 * se)
    assert rnd["full_n"] == 150 and rnd["full_ci"] == "wilson"  # one full call per item


@pytest.mark.slow
def test_whole_customs_bank_mixed(tmp_path: Path, repo_root: Path, shared_data: Path) -> None:
    data = json.loads((shared_data / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))
    items = to_items(mixed_records(data))
    assert len(items) == 2949  # every keyed four-option item
    predictions = run_bank(items, repo_root, tmp_path / "cache.sqlite", full=False)
    rnd = check_bank(items, predictions, excess_tolerance=0.01)
    assert rnd["blind_items"] == 2949
    assert float(np.mean([1 / it.n_options for it in items])) == pytest.approx(0.2611, abs=1e-4)
