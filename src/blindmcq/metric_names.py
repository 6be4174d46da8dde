"""The per-model metric kinds: one list that ``reports/metrics.json`` (``analysis/tables.headline_metrics``)
writes and MLflow's names by role (``reporting/tracking.py``, ``sweep.py``) read, so a new statistic
cannot be written under one name and tracked under none. A leaf: it imports nothing.
"""

from __future__ import annotations

# ``{kind}/{model}/{set}``: per model and item set (all, accepted, rejected)
SET_KINDS = ("blind_acc", "blind_lo", "blind_hi", "full_acc", "habit", "excess", "blind_p_holm")
# ``{kind}/{model}/{detail set}``: per model at the detail set only
DETAIL_KINDS = ("position_free",)
# ``{kind}/{model}``: per model, against the gate model
PAIR_KINDS = ("agreement", "expected", "gap")
PER_MODEL_KINDS = SET_KINDS + DETAIL_KINDS  # three-part names
