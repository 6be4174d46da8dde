"""A run whose probed model did not answer stops instead of reporting success (``analysis.max_failed_share``).

Checked after the calls and before any table: per probed model, the share of its calls that ended in a
backend error (``parse_status`` ``error``: a 401, a connection refused, a throttling that outlived its
retries). A model with no answer at all (every call an error or a refusal, or no call), or with an error
share above ``analysis.max_failed_share``, stops the run with one line naming the model, the counts and
the first error (scrubbed). Below that share the model is analysed as before, its Err/Ref/Trunc counts
in Tables 3 and 4. The predictions are written before the check, so the failures can be inspected.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from blindmcq.errors import BlindMCQError, one_line
from blindmcq.secrets import scrub_text
from blindmcq.vocabulary import FAILED_STATUSES


class RunFailed(BlindMCQError):
    """A probed model answered nothing, or too many of its calls failed."""


def check_failed_calls(
    predictions: pd.DataFrame,
    max_failed_share: float,  # analysis.max_failed_share: its default lives in config/schema.py only
    *,
    models: Iterable[str] = (),
    where: str = "",
) -> None:
    """Raise ``RunFailed`` (one line) for the first model in ``predictions`` (or named in ``models``
    and absent from them) that has no answer or an error share above ``max_failed_share``."""
    status = predictions["parse_status"].astype(str) if len(predictions) else pd.Series([], dtype=str)
    model_col = predictions["model"].astype(str) if len(predictions) else pd.Series([], dtype=str)
    names = list(dict.fromkeys([*map(str, models), *model_col.unique()]))
    suffix = f" (predictions: {where})" if where else ""
    for name in names:
        mine = model_col == name
        n = int(mine.sum())
        if n == 0:
            raise RunFailed(f"model {name}: no calls were made{suffix}")
        errors = int((status[mine] == "error").sum())
        answered = int((~status[mine].isin(FAILED_STATUSES)).sum())
        share = errors / n
        if answered and share <= max_failed_share:
            continue
        first = ""
        if errors and "error" in predictions.columns:
            texts = predictions.loc[mine & (status == "error"), "error"].dropna().astype(str)
            if len(texts):
                first = f"; first error: {scrub_text(texts.iloc[0], assignments=False)[:200]}"
        what = "no answer" if not answered else f"{share:.0%} of calls failed"
        raise RunFailed(
            one_line(
                f"model {name}: {what} ({errors} of {n} calls ended in an error; "
                f"analysis.max_failed_share is {max_failed_share:g}){first}{suffix}"
            )
        )
