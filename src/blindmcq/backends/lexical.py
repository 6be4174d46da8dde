"""Lexical search over the statutes as a "model": it answers with the option best matched in the BM25
index the ``statutes`` stage builds (``results/statutes/index``), reading the option texts alone.

The scoring is Table 2's ``lexical_search`` row (:mod:`blindmcq.statutes.lexical`): each option is one
query, its score the best BM25 score over all provisions, ties within ``tie_rtol`` broken uniformly at
random seeded by (seed, item id) over the tied options in published order. Given the published order of
the options (``request.extra["option_order"]``, the original index shown in each slot) and the item id,
the pick is the same option in every order, so its blind accuracy over any orders equals Table 2's
lexical figure (tests/backends/test_lexical.py). Without them (a caller that is not the probe), ties are
broken over the slots as shown, seeded by the empty id.

Contract with the presentation layer (as for the heuristic strategies): ``request.extra["option_texts"]``
holds the option shown in each slot, and the answer is that slot's label from ``request.choices`` (or
``request.extra["label_strings"]``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blindmcq import paths
from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
from blindmcq.backends.heuristic import answer_text, option_fields
from blindmcq.config.schema import LexicalModel
from blindmcq.errors import ConfigError, InputError


class LexicalBackend:
    """Picks the option whose best BM25 match over the statute provisions scores highest."""

    @classmethod
    def declared_abilities(cls, model_cfg: LexicalModel) -> Abilities:
        """Judges the option texts against the statutes index, never the prompt."""
        return Abilities(generate=True, needs_option_texts=True, needs_option_order=True, reads_statutes=True)

    def __init__(self, model_cfg: LexicalModel) -> None:
        # the schema checks tie_break (a vocabulary.TieBreak) and tie_rtol (>= 0)
        self.cfg = model_cfg
        self.index_dir = Path(self.cfg.index or paths.STATUTE_INDEX)
        self._index_id: str | None = None
        self.seed = self.cfg.seed
        self.tie_break: str = self.cfg.tie_break
        self.tie_rtol = self.cfg.tie_rtol
        self.name = "lexical"  # the index's identity is in every wire request (``index_id``)
        self.concurrency = self.cfg.calls_in_flight
        self.abilities = self.declared_abilities(self.cfg)
        self._index: Any = None
        self._analyzer: Any = None
        self._memo: dict[str, float] = {}
        self._lock = threading.Lock()

    @property
    def index_id(self) -> str:
        """The index's identity: a hash of its meta (source sha256, text analysis, BM25 parameters,
        sizes). Read on first use, so building the backend touches no file."""
        if self._index_id is None:
            meta = self.index_dir / "meta.json"
            if not meta.is_file():
                raise ConfigError(
                    "model.index",
                    f"no statute index at {self.index_dir} (no meta.json): run `dvc repro statutes`",
                )
            self._index_id = hashlib.sha256(meta.read_bytes()).hexdigest()[:16]
        return self._index_id

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """Everything the answer depends on: the index, the tie rule, the options, labels and order."""
        return {
            "index": self.index_id,
            "seed": self.seed,
            "tie_break": self.tie_break,
            "tie_rtol": self.tie_rtol,
            "option_texts": [str(o) for o in request.extra.get("option_texts") or []],
            "labels": list(request.choices) or list(request.extra.get("label_strings") or []),
            "option_order": list(request.extra.get("option_order") or []),
            "item_id": request.extra.get("item_id"),
        }

    def _load(self) -> None:
        if self._index is None:
            from blindmcq.statutes.index import load_statute_index

            self._index, self._analyzer = load_statute_index(self.index_dir)

    def option_scores(self, options: Sequence[str]) -> list[float]:
        """Each option's best BM25 score over the provisions (memoised by text: the 2N orders of an item
        share their options)."""
        with self._lock:
            _ = self.index_id  # a missing index is a config error naming model.index
            self._load()
            missing = [o for o in dict.fromkeys(options) if o not in self._memo]
            if missing:
                _, best = self._index.best_matches([self._analyzer(o) for o in missing])
                self._memo.update(zip(missing, (float(s) for s in best), strict=True))
            return [self._memo[o] for o in options]

    def pick(
        self, options: Sequence[str], order: Sequence[int] | None, item_id: str
    ) -> tuple[int, list[int]]:
        """(slot picked, tied slots). Ties are broken as ``statutes.lexical.pick_best`` breaks them, over the
        options in published order, so the option picked does not depend on the slots shown."""
        from blindmcq.statutes.lexical import pick_best

        n = len(options)
        order = list(order) if order else list(range(n))
        if sorted(order) != list(range(n)):
            raise InputError(f"option_order {order} is not a permutation of {n} slots", item=item_id)
        scores = self.option_scores(options)
        published = np.empty(n, dtype=np.float64)
        for slot, original in enumerate(order):
            published[original] = scores[slot]
        chosen, tied = pick_best(published, item_id, self.seed, self.tie_rtol, self.tie_break)  # type: ignore[arg-type]
        return order.index(chosen), sorted(order.index(t) for t in tied)

    def complete(self, request: ModelRequest) -> ModelResponse:
        options, labels = option_fields(request)
        item = request.extra.get("item_id")
        slot, tied = self.pick(options, request.extra.get("option_order"), str(item or ""))
        text = answer_text(options, labels, slot)
        return ModelResponse(
            text=text, input_tokens=0, output_tokens=0, latency_s=0.0, meta={"slot": slot, "tied": tied}
        )
