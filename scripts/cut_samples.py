"""Cut the small real-text samples under tests/fixtures/samples/ from the full inputs (``make data``).

The samples keep each file's name, shape and columns, so a test can read either the full inputs or the
sample through the same loader. Deterministic: the first items of each part, in file order.

    python scripts/cut_samples.py [DATA_DIR]        # DATA_DIR defaults to data/
"""

from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "samples"
CODE_ACT = "Митний кодекс України"  # the corpus tests render 40 Customs Code items
PER_ACT, CODE_ITEMS, COMPETENCIES, PER_LEVEL = 10, 40, 3, 4
LEXAM_ROWS, PERTURBATION_ROWS, PROVISIONS = 40, 20, 300


def customs(src: Path, dst: Path) -> None:
    raw = json.loads(src.read_text(encoding="utf-8"))
    legislation = {
        act: items[: CODE_ITEMS if act == CODE_ACT else PER_ACT] for act, items in raw["legislation"].items()
    }
    competencies = {}
    for code in list(raw["operational_competencies"])[:COMPETENCIES]:
        entry = raw["operational_competencies"][code]
        levels = {level: items[:PER_LEVEL] for level, items in entry["levels"].items()}
        competencies[code] = {**entry, "levels": levels}
    # keep the one real item without a marked key (ОК-1, level 3): loaders must flag it, not guess
    keyless = [r for r in raw["operational_competencies"]["ОК-1"]["levels"]["3"] if r["correct_index"] == -1]
    competencies["ОК-1"]["levels"]["3"] += keyless
    n = sum(map(len, legislation.values())) + sum(
        len(v) for c in competencies.values() for v in c["levels"].values()
    )
    meta = {**raw["meta"], "total_questions": n, "sample_of": "ua-customs-exam/questions.json"}
    out = {"meta": meta, "legislation": legislation, "operational_competencies": competencies}
    dst.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def lexam(src: Path, dst: Path, rows: int) -> None:
    pd.read_excel(src).head(rows).to_excel(dst, index=False)


def provisions(src: Path, dst: Path) -> None:
    """The first provisions of the file, in file order (the Constitution comes first)."""
    with lzma.open(src, "rt", encoding="utf-8") as f:
        lines = [line for _, line in zip(range(PROVISIONS), f, strict=False)]
    with lzma.open(dst, "wt", encoding="utf-8", preset=9) as f:
        f.writelines(lines)


def main(data: Path) -> None:
    for sub in ("ua-customs-exam", "lexam", "ua-legislation"):
        (OUT / sub).mkdir(parents=True, exist_ok=True)
    customs(data / "ua-customs-exam/questions.json", OUT / "ua-customs-exam/questions.json")
    lexam(data / "lexam/MCQs_test.xlsx", OUT / "lexam/MCQs_test.xlsx", LEXAM_ROWS)
    lexam(
        data / "lexam/MCQs_test_perturbation.xlsx",
        OUT / "lexam/MCQs_test_perturbation.xlsx",
        PERTURBATION_ROWS,
    )
    provisions(data / "ua-legislation/provisions.jsonl.xz", OUT / "ua-legislation/provisions.jsonl.xz")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "data")
