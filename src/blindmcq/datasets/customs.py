"""The State Customs Service's civil-service test bank (``ua-customs-exam/questions.json``).

2,950 four-option Ukrainian items: 340 on four acts of legislation and 2,610 on 17 operational
competencies, each in up to three levels. Ids are ``dmsu-{bank}-{number}`` where the bank is
the act (``constitution``, ``civil-service``, ``customs-code``, ``anticorruption``; the same slugs
as the rendered PDFs ``dmsu-{bank}.pdf``) or the competency and level (``ok-3-l2``), and the
number is the item's own number, which restarts in every act and every level.

Two quirks of the source, kept visible rather than repaired:
- For 13 competencies the source's parser folded "Рівень 1" into the competency name and filed the
  level-1 items under level ``"null"`` (their ``"1"`` list is empty, and they come first in uid order).
  Those items are level 1 here; ``meta["source_level"]`` keeps ``"null"``.
- One item (uid q00452) has no option marked correct (``correct_index`` -1): it is kept with
  ``key=None``, status ``malformed``, flag ``invariant``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from blindmcq.config.schema import CustomsDataset, choices
from blindmcq.datasets.items import Item, invariant_flags, item_id
from blindmcq.errors import ConfigError, InputError

SOURCE = "dmsu"
N_OPTIONS = 4
PARTS = choices(CustomsDataset, "parts")

ACT_SLUGS: dict[str, str] = {
    "Конституція України": "constitution",
    "Закон України «Про державну службу»": "civil-service",
    "Митний кодекс України": "customs-code",
    "Закон України «Про запобігання корупції»": "anticorruption",
}
LEVEL_1_SUFFIX = "Рівень 1"


def competency_slug(code: str) -> str:
    """``ОК-3`` -> ``ok-3`` (Cyrillic О and К, as the source spells the codes)."""
    return code.strip().replace("О", "o").replace("К", "k").replace("O", "o").replace("K", "k").lower()


def _level(name: str, levels: dict[str, Any], level: str, file: str, code: str) -> int:
    if level != "null":
        try:
            return int(level)
        except ValueError as exc:
            raise InputError(f"competency {code}: unexpected level {level!r}", file=file) from exc
    # The level-1 items the source's parser filed under "null" (see module docstring).
    if name.strip().endswith(LEVEL_1_SUFFIX) and not levels.get("1"):
        return 1
    raise InputError(f"competency {code}: level 'null' that is not the folded level 1", file=file)


def _item(raw: dict[str, Any], bank: str, file: str, meta: dict[str, Any]) -> Item:
    try:
        number = int(raw["number"])
        options = [str(a["text"]) for a in raw["answers"]]
        marked = [j for j, a in enumerate(raw["answers"]) if a["is_correct"]]
        correct_index = raw.get("correct_index")
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"malformed item record in bank {bank}: {exc!r}", file=file, item=raw.get("uid")
        ) from exc
    flags = invariant_flags(options, marked, N_OPTIONS)
    if len(marked) == 1 and correct_index != marked[0]:
        flags.append("invariant")  # the two key fields of the source disagree; trust neither
    key = marked[0] if "invariant" not in flags else None
    return Item(
        id=item_id(SOURCE, bank, number),
        source=SOURCE,
        bank=bank,
        number=number,
        question=str(raw.get("question", "")),
        options=tuple(options),
        key=key,
        status="ok" if key is not None else "malformed",
        flags=tuple(flags),
        file=file,
        meta={"uid": raw.get("uid"), "correct_index": correct_index, **meta},
    )


def load_customs(
    path: str | Path,
    *,
    parts: Iterable[str] = PARTS,
    acts: Iterable[str] | None = None,
    competencies: Iterable[str] | None = None,
    levels: Iterable[int] | None = None,
) -> list[Item]:
    """Items of the bank in published order, optionally a selection.

    ``parts``: ``legislation`` and/or ``operational``; ``acts``: act slugs (``constitution`` ...);
    ``competencies``: slugs (``ok-1`` ...); ``levels``: 1, 2, 3. None selects all.
    """
    path = Path(path)
    file = path.name
    parts = list(parts)
    for part in parts:
        if part not in PARTS:
            raise ConfigError("dataset.parts", f"unknown part {part!r}; expected one of {list(PARTS)}")
    want_acts = set(acts) if acts is not None else None
    if want_acts and not want_acts <= set(ACT_SLUGS.values()):
        unknown = sorted(want_acts - set(ACT_SLUGS.values()))
        raise ConfigError(
            "dataset.acts", f"unknown acts {unknown}; expected some of {sorted(ACT_SLUGS.values())}"
        )
    want_comp = {competency_slug(c) for c in competencies} if competencies is not None else None
    want_levels = {int(x) for x in levels} if levels is not None else None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError("bank file not found", file=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=str(path)) from exc

    items: list[Item] = []
    if "legislation" in parts:
        for act, raws in data["legislation"].items():
            if act not in ACT_SLUGS:
                raise InputError(f"unknown act {act!r}; add its slug to ACT_SLUGS", file=file)
            bank = ACT_SLUGS[act]
            if want_acts is None or bank in want_acts:
                items += [_item(r, bank, file, {"part": "legislation", "act": act}) for r in raws]
    if "operational" in parts:
        for code, comp in data["operational_competencies"].items():
            slug = competency_slug(code)
            if want_comp is not None and slug not in want_comp:
                continue
            # Published (uid) order is level 1, 2, 3; the source's dict lists the folded level 1 last.
            by_level = sorted(
                (
                    (_level(comp["name"], comp["levels"], source_level, file, code), source_level, raws)
                    for source_level, raws in comp["levels"].items()
                ),
                key=lambda entry: entry[0],
            )
            for level, source_level, raws in by_level:
                if not raws or (want_levels is not None and level not in want_levels):
                    continue
                bank = f"{slug}-l{level}"
                meta = {
                    "part": "operational",
                    "competency": code,
                    "competency_name": comp["name"],
                    "level": level,
                    "source_level": source_level,
                }
                items += [_item(r, bank, file, meta) for r in raws]
    _check_unique(items, file)
    return items


def _check_unique(items: list[Item], file: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise InputError("item number repeats within its bank", file=file, item=item.id)
        seen.add(item.id)
