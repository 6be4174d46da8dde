"""SL-vs-MD metrics on a predictions frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from blindmcq.protocols.compare import accuracy_by_protocol, fewshot_bias, order_variance, variance_ratio


def frame(per_order: dict[tuple[str, str], list[bool]], status: str = "ok") -> pd.DataFrame:
    rows = [
        {
            "model": "m",
            "protocol": p,
            "order_id": o,
            "correct": c,
            "parse_status": status,
            "raw_response": "",
            "setting": "uniform",
        }
        for (p, o), cs in per_order.items()
        for c in cs
    ]
    return pd.DataFrame(rows)


DATA = {
    ("sl", "rot0"): [True, True, True, False],  # .75
    ("sl", "rot1"): [True, False, False, False],  # .25
    ("md", "rot0"): [True, True, False, False],  # .5
    ("md", "rot1"): [True, False, True, False],  # .5
}


def test_accuracy_by_protocol_with_wilson_interval() -> None:
    df = frame(DATA)
    df.loc[0, "parse_status"] = "uncertain"
    out = accuracy_by_protocol(df).set_index("protocol")
    assert out.loc["sl", "accuracy"] == pytest.approx(0.5) and out.loc["md", "n"] == 8
    assert out.loc["sl", "ci_low"] < 0.5 < out.loc["sl", "ci_high"]
    assert out.loc["sl", "uncertain_rate"] == pytest.approx(1 / 8) and out.loc["md", "uncertain_rate"] == 0


def test_order_variance_and_ratio() -> None:
    var = order_variance(frame(DATA)).set_index("protocol")
    assert var.loc["sl", "variance"] == pytest.approx(np.var([0.75, 0.25]))
    assert var.loc["md", "variance"] == 0 and var.loc["sl", "n_orders"] == 2
    ratio = variance_ratio(frame(DATA))
    assert ratio.loc[0, "ratio_md_sl"] == 0.0
    flipped = variance_ratio(
        frame({("sl", k[1]) if k[0] == "md" else ("md", k[1]): v for k, v in DATA.items()})
    )
    assert np.isnan(flipped.loc[0, "ratio_md_sl"])  # SL variance 0: undefined, not infinite


def test_fewshot_bias_splits_explicit_from_implicit() -> None:
    df = frame({("sl", "rot0"): [True, True, False, False]})
    df["raw_response"] = [
        "As in all the previous examples, the answer is A.",
        "A",
        "B",
        "Усі відповіді — А, тож А.",
    ]
    out = fewshot_bias(df).iloc[0]
    assert out["explicit_rate"] == 0.5
    assert out["accuracy_explicit"] == 0.5 and out["accuracy_implicit"] == 0.5


def test_missing_columns_are_named() -> None:
    with pytest.raises(ValueError, match="order_id"):
        order_variance(frame(DATA).drop(columns="order_id"))
