"""Every interval of ``stats`` lies in [0, 1] and holds its estimate, at every k of n (k = 0 and k = n
included), and a bank one model answers always (another never) runs through the analysis, every table
and every figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from simulate import SimModel, simulate

from blindmcq import stats
from blindmcq.analysis import analyze, bank_blind_accuracy, build_tables, gate, write_figures, write_tables
from blindmcq.analysis.findings import findings
from blindmcq.analysis.tables import headline_metrics

counts = st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


def holds(p: float, lo: float, hi: float) -> bool:
    return 0.0 <= lo <= p <= hi <= 1.0


def all_pairs(top: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (k, n) with 0 <= k <= n, 1 <= n <= top."""
    n = np.repeat(np.arange(1, top + 1), np.arange(2, top + 2))
    start = np.repeat(np.cumsum(np.r_[0, np.arange(2, top + 1)]), np.arange(2, top + 2))
    return np.arange(n.size) - start, n


def test_wilson_columns_holds_its_estimate_for_every_k_of_n() -> None:
    k, n = all_pairs(2_000)  # every pair to n = 2,000 (2 million); past it the edges, where rounding bites
    assert k.min() == 0 and np.all(k <= n) and np.sum(k == n) == 2_000
    top = np.arange(1, 10_001)
    k = np.r_[k, 0 * top, top, np.minimum(1, top), top - 1]
    n = np.r_[n, top, top, top, top]
    p, lo, hi = stats.wilson_columns(k, n)
    assert np.all((lo >= 0) & (lo <= p) & (p <= hi) & (hi <= 1))


@given(counts)
def test_wilson_and_proportion_hold_their_estimate(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = stats.wilson(k, n)
    assert holds(k / n, lo, hi)
    acc = stats.accuracy(k, n)
    assert holds(acc.value, acc.lo, acc.hi)
    p, clo, chi = (float(v[0]) for v in stats.wilson_columns([k], [n]))
    assert holds(p, clo, chi)


@given(counts, st.floats(0.0, 0.5), st.integers(2, 400))
def test_item_level_bounds_hold_their_estimate(kn: tuple[int, int], sd: float, items: int) -> None:
    k, n = kn
    p = k / n
    lo, hi = stats.item_share_bounds(np.array([p]), np.array([sd]), np.array([items]), np.array([n]))
    assert holds(p, float(lo[0]), float(hi[0]))


@given(st.integers(1, 60), st.integers(1, 8), st.sampled_from(["all", "none", "mixed"]))
def test_clustered_proportion_holds_its_estimate(n_items: int, per_item: int, kind: str) -> None:
    items = np.repeat(np.arange(n_items), per_item)
    y = {"all": np.ones(items.size), "none": np.zeros(items.size), "mixed": (items % 3 == 0).astype(float)}[
        kind
    ]
    share = stats.clustered_proportion(y, items)
    assert holds(share.value, share.lo, share.hi)


def never_right(rows: pd.DataFrame, name: str) -> pd.DataFrame:
    """The same calls, each answered by the option one slot after the key: right in no order."""
    out = rows.copy()
    n = out["n_options"].astype(int)
    out["picked_slot"] = ((out["key_slot"].astype(int) + 1) % n).astype(float)
    out["picked_option"] = [float(o[int(s)]) for o, s in zip(out["order"], out["picked_slot"], strict=True)]
    out["correct"] = False
    out["model"] = name
    out["request_hash"] = out["request_hash"] + "-never"
    return out


def test_a_perfect_and_a_hopeless_model_run_through_every_table_and_figure(tmp_path, bank) -> None:
    items = bank[:97]  # 97 items, 776 blind calls: the closed form's upper bound at 776 of 776 rounds below 1
    perfect = SimModel("perfect", (0.25, 0.25, 0.25, 0.25), 2.0, 2.0)
    models = [SimModel("gate", (0.4, 0.3, 0.2, 0.1), 0.15, 0.6), perfect]
    preds = simulate(items, models, seed=3)
    preds = pd.concat([preds, never_right(preds[preds["model"] == "perfect"], "never")], ignore_index=True)
    a = analyze(preds, gate=gate(preds, gate_model="gate"), sample_sizes=[40])
    s = a.summary.set_index(["model", "set"])
    assert s.loc[("perfect", "all"), "blind_acc"] == 1.0 and s.loc[("perfect", "all"), "blind_hi"] == 1.0
    assert s.loc[("never", "all"), "blind_acc"] == 0.0 and s.loc[("never", "all"), "blind_lo"] == 0.0
    for side in ("blind", "full"):
        acc, lo, hi = a.summary[f"{side}_acc"], a.summary[f"{side}_lo"], a.summary[f"{side}_hi"]
        ok = acc.notna()
        assert ((lo[ok] <= acc[ok]) & (acc[ok] <= hi[ok]) & (lo[ok] >= 0) & (hi[ok] <= 1)).all()
    tables = build_tables(a, items=items)
    write_tables(tmp_path / "tables", tables)
    acc = bank_blind_accuracy({"bank": preds, "again": preds})
    assert ((acc["lo"] <= acc["acc"]) & (acc["acc"] <= acc["hi"])).all()
    paths = write_figures(tmp_path / "figures", a, banks={"bank": items, "again": items}, bank_accuracy=acc)
    assert sorted(paths) == ["figure1", "figure2", "figure3", "figure4"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths.values())
    metrics = headline_metrics(a)
    assert metrics["blind_acc/perfect/all"] == 1.0 and metrics["blind_acc/never/all"] == 0.0
    assert findings(a, model="perfect")
