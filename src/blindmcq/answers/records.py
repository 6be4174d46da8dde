"""The per-call prediction record (SPEC, "Per-call record"): one row per model call, nothing dropped.

Predictions are stored as Parquet with exactly these columns (and a JSONL export of the same rows).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from blindmcq.vocabulary import PARSE_STATUSES, AnswerProtocol, Condition, ParseStatus  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class PredictionRecord:
    item_id: str
    model: str
    condition: Condition
    phrasing: str
    labels: str  # latin | cyrillic | numerals | dash
    protocol: AnswerProtocol  # sl (select-and-letter) | md (matched-and-dashed)
    reasoning: str  # direct | step_by_step | thinking
    order: list[int]  # original option index shown in each slot
    order_id: str  # e.g. "rot0".."rot3", "rev0".."rev3", "forced2"
    forced_slot: int | None
    key_slot: int | None
    n_options: int
    picked_slot: int | None
    picked_option: int | None
    correct: bool
    parse_status: ParseStatus
    raw_response: str
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float | None
    region: str | None
    request_hash: str
    time: str  # ISO 8601 UTC
    backend: str = ""
    cached: bool = False
    error: str | None = None
    setting: str = ""  # free-form run setting (e.g. few-shot skew), for sweeps
    stop_reason: str | None = None  # the backend's stop reason (Bedrock stopReason; max_tokens = truncated)

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


PREDICTION_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(PredictionRecord))
