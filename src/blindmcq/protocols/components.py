"""The four protocol components of the MD seed as separate settings, so a sweep varies one at a time.

- P, few-shot prompt -> ``fewshot``: ``none`` or the examples' answer distribution
  (``all_a``, ``a70``, ``uniform``), with ``n_shots`` examples.
- L, labels -> ``labels``: ``latin``, ``cyrillic``, ``numerals``, ``dash``; null = the ``labels`` group.
- pi, order -> ``order``: null = the ``condition`` group's orders; ``all`` (the 2N rotations);
  ``published`` (rot0).
- X, extraction -> ``extraction``: ``letter`` (SL: parse one label) or ``match`` (MD: the final
  sentence matched to an option by ``blindmcq.protocols.md``).

SL = (none, latin, all, letter); MD = (none, dash, all, match). ``letter`` needs distinct labels, so
``labels: dash`` with ``extraction: letter`` is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from blindmcq.errors import ConfigError

FEWSHOT = ("none", "all_a", "a70", "uniform")
ORDERS = (None, "all", "published")
EXTRACTIONS = ("letter", "match")


@dataclass(frozen=True)
class ProtocolSpec:
    name: str
    fewshot: str = "none"  # P
    labels: str | None = None  # L
    order: str | None = None  # pi
    extraction: str = "letter"  # X
    n_shots: int = 0

    @property
    def uses_matcher(self) -> bool:
        return self.extraction == "match"


def protocol_spec(cfg: Mapping[str, Any], *, prefix: str = "protocol") -> ProtocolSpec:
    """Validate the protocol group; errors name ``prefix.key``."""
    name = cfg.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{prefix}.name", "missing protocol name")
    fewshot = cfg.get("fewshot", "none") or "none"
    if fewshot not in FEWSHOT:
        raise ConfigError(f"{prefix}.fewshot", f"expected one of {FEWSHOT}, got {fewshot!r}")
    order = cfg.get("order")
    if order not in ORDERS:
        raise ConfigError(f"{prefix}.order", f"expected null, 'all' or 'published', got {order!r}")
    extraction = cfg.get("extraction", "letter")
    if extraction not in EXTRACTIONS:
        raise ConfigError(f"{prefix}.extraction", f"expected one of {EXTRACTIONS}, got {extraction!r}")
    labels = cfg.get("labels")
    if labels is not None and not isinstance(labels, str):
        raise ConfigError(f"{prefix}.labels", f"expected a label scheme name or null, got {labels!r}")
    if labels == "dash" and extraction == "letter":
        raise ConfigError(f"{prefix}.extraction", "'letter' extraction cannot tell uniform dash labels apart")
    n_shots = cfg.get("n_shots", 0)
    if isinstance(n_shots, bool) or not isinstance(n_shots, int) or n_shots < 0:
        raise ConfigError(f"{prefix}.n_shots", f"expected an integer >= 0, got {n_shots!r}")
    if fewshot != "none" and n_shots == 0:
        raise ConfigError(f"{prefix}.n_shots", f"fewshot={fewshot!r} needs n_shots > 0")
    return ProtocolSpec(name, fewshot, labels, order, extraction, n_shots)
