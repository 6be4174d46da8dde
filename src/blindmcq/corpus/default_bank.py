"""The default sample: the customs bank's 340 legislation items printed as Commission-layout PDFs.

One PDF per act, named ``{source}-{bank}.pdf``; real items as published, nothing injected. The corpus
stage of the default run extracts these, so the default run starts from PDF as the real one does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blindmcq.corpus.render import ItemSpec, Rendered, render_pdf
from blindmcq.errors import InputError

SOURCE = "dmsu"
ACTS = {  # act name in questions.json -> bank
    "Конституція України": "constitution",
    "Закон України «Про державну службу»": "civil-service",
    "Митний кодекс України": "customs-code",
    "Закон України «Про запобігання корупції»": "anticorruption",
}


def legislation(questions_json: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Source items by bank, as in ``questions.json`` (``legislation`` part)."""
    path = Path(questions_json)
    try:
        acts = json.loads(path.read_text(encoding="utf-8"))["legislation"]
    except (OSError, json.JSONDecodeError, KeyError) as exc:
        raise InputError(f"cannot read the legislation items: {exc}", file=str(path)) from exc
    missing = sorted(set(ACTS) - set(acts))
    if missing:
        raise InputError(f"acts missing: {missing}", file=str(path))
    return {bank: acts[act] for act, bank in ACTS.items()}


def spec(record: dict[str, Any]) -> ItemSpec:
    answers = record["answers"]
    return ItemSpec(
        number=int(record["number"]),
        question=record["question"],
        options=tuple(a["text"] for a in answers),
        keys=tuple(i for i, a in enumerate(answers) if a["is_correct"]),
    )


def render_default_bank(questions_json: str | Path, out_dir: str | Path) -> list[Rendered]:
    """Write the four PDFs into ``out_dir``; return them with their ground truth."""
    out = Path(out_dir)
    rendered = []
    for act, (bank, records) in zip(ACTS, legislation(questions_json).items(), strict=True):
        rendered.append(
            render_pdf(
                [spec(r) for r in records],
                out / f"{SOURCE}-{bank}.pdf",
                source=SOURCE,
                bank=bank,
                title=f"Перелік тестових питань: {act}",
            )
        )
    return rendered
