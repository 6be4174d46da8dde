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

from dataclasses import dataclass

from blindmcq.config.schema import Protocol
from blindmcq.errors import ConfigError


@dataclass(frozen=True)
class ProtocolSpec:
    """A protocol's components, read from the checked ``protocol`` group (``protocol_spec``), whose
    defaults they are."""

    name: str
    fewshot: str  # P
    labels: str | None  # L
    order: str | None  # pi
    extraction: str  # X
    n_shots: int

    @property
    def uses_matcher(self) -> bool:
        return self.extraction == "match"


def protocol_spec(protocol: Protocol, *, prefix: str = "protocol") -> ProtocolSpec:
    """The typed protocol group's components (the schema, ``Protocol``, holds the words each component
    allows), checked together. Errors name ``prefix.key``."""
    if not protocol.name:
        raise ConfigError(f"{prefix}.name", "missing protocol name")
    if protocol.labels == "dash" and protocol.extraction == "letter":
        raise ConfigError(f"{prefix}.extraction", "'letter' extraction cannot tell uniform dash labels apart")
    if protocol.fewshot != "none" and protocol.n_shots == 0:
        raise ConfigError(f"{prefix}.n_shots", f"fewshot={protocol.fewshot!r} needs n_shots > 0")
    return ProtocolSpec(
        protocol.name,
        protocol.fewshot,
        protocol.labels,
        protocol.order,
        protocol.extraction,
        protocol.n_shots,
    )
