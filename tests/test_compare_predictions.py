from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

_SPEC = importlib.util.spec_from_file_location(
    "compare_predictions", Path(__file__).resolve().parents[1] / "scripts" / "compare_predictions.py"
)
assert _SPEC is not None and _SPEC.loader is not None
compare = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(compare)


def _frame(**over: list) -> pd.DataFrame:
    base = {"item_id": ["a", "b"], "picked_slot": [0, 1], "time": ["t1", "t2"], "latency_s": [0.1, 0.2]}
    return pd.DataFrame({**base, **over})


def test_time_and_latency_may_differ_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "ref" / "p").mkdir(parents=True)
    (tmp_path / "new" / "p").mkdir(parents=True)
    _frame().to_parquet(tmp_path / "ref" / "p" / "x.parquet")
    _frame(time=["u1", "u2"], latency_s=[9.0, 9.0]).to_parquet(tmp_path / "new" / "p" / "x.parquet")
    assert compare.main([str(tmp_path / "ref"), str(tmp_path / "new")]) == 0
    _frame(picked_slot=[0, 2]).to_parquet(tmp_path / "new" / "p" / "x.parquet")
    assert compare.main([str(tmp_path / "ref"), str(tmp_path / "new")]) == 1


def test_an_added_column_is_a_difference_unless_allowed() -> None:
    ref, new = _frame(), _frame().assign(extra=[1, 2])
    assert compare.compare_frames(ref, new) is not None
    assert compare.compare_frames(ref, new, allow_new=("extra",)) is None
