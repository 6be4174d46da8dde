"""Few-shot prompts (component P of the MD seed): worked examples prepended to each presentation.

One block per run, the same for every presentation (a fixed prompt, as in the seed), drawn from the
examples by ``seed``; a presentation whose own item is among the block's examples gets a block drawn
from the pool without it, so no item ever sees its own answer. The block's answers follow ``skew``
(``blindmcq.datasets.nonsense.fewshot_block``): under SL "Відповідь: A"-style lines in the same label
scheme as the test prompt, under MD dash options and a complete-sentence final answer. Nothing is
random beyond ``seed``, so the same config gives byte-identical prompts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from blindmcq.config.schema import Labels
from blindmcq.datasets.items import Item
from blindmcq.datasets.nonsense import FewShotBlock, fewshot_block
from blindmcq.errors import ConfigError
from blindmcq.tasks.presentations import Presentation
from blindmcq.vocabulary import ANSWER_PROTOCOLS, FEWSHOT_SKEWS, FewShotSkew

SEPARATOR = "\n\n"


def _check(skew: str, n_shots: int, labels_cfg: Labels, protocol: str) -> None:
    if skew not in FEWSHOT_SKEWS:
        raise ConfigError("protocol.fewshot", f"expected one of {FEWSHOT_SKEWS}, got {skew!r}")
    if isinstance(n_shots, bool) or not isinstance(n_shots, int) or n_shots <= 0:
        raise ConfigError("protocol.n_shots", f"expected an integer > 0, got {n_shots!r}")
    if protocol not in ANSWER_PROTOCOLS:
        raise ConfigError("protocol", f"expected sl or md, got {protocol!r}")
    if (protocol == "md") != labels_cfg.uniform:
        raise ConfigError("labels", f"protocol {protocol!r} cannot use label scheme {labels_cfg.name!r}")


def apply_fewshot(
    presentations: Sequence[Presentation],
    *,
    examples: Sequence[Item],
    skew: FewShotSkew,
    n_shots: int,
    seed: int,
    labels_cfg: Labels,
    protocol: str,
) -> list[Presentation]:
    """Each presentation with ``block + "\\n\\n" + user`` as its user text (everything else unchanged)."""
    labels = labels_cfg
    _check(skew, n_shots, labels, protocol)
    pool = [e for e in examples if e.usable]
    if len(pool) < n_shots + 1:
        raise ConfigError("protocol.n_shots", f"{n_shots} shots need more than {len(pool)} usable examples")
    blocks: dict[tuple[str, str | None], FewShotBlock] = {}

    def block(language: str, without: str | None) -> FewShotBlock:
        if (language, without) not in blocks:
            chosen = [e for e in pool if e.id != without]
            blocks[language, without] = fewshot_block(
                chosen, skew=skew, labels=labels, n_shots=n_shots, seed=seed, language=language
            )
        return blocks[language, without]

    out = []
    for p in presentations:
        if p.protocol != protocol:
            raise ConfigError("protocol", f"presentation of {p.item_id} is {p.protocol!r}, not {protocol!r}")
        shown = block(p.language, None)
        if p.item_id in shown.item_ids:  # never show an item its own answer
            shown = block(p.language, p.item_id)
        out.append(dataclasses.replace(p, user=f"{shown.text}{SEPARATOR}{p.user}"))
    return out
