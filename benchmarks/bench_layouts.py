"""Items exact, disputed and wrong per layout variant (src/blindmcq/corpus/variants.py).

Renders each variant from a seeded sample of the real customs items (the full bank from
--questions when present, else the committed sample tests/fixtures/corpus/customs_sample.json), extracts it
by both paths, and scores every item against the ground truth the renderer returns:
  exact: not disputed and equal to the truth (id, stem, options, key, status, flags, file, page);
  disputed: status "disputed" (listed for review, left out of probing);
  wrong: anything else, including items missed or invented: silently wrong.
Targets: wrong 0 on every variant; disputed at most 1% of a variant (no cap where the variant prints faults
into many items by design, Variant.expect_disputed); a variant the paths cannot read
(tables ruled only horizontally, only framed or only shaded; text cut off by the page's box) stops with one
line naming the page and the reason.
The layout column ends with the number
of items the line reading (corpus/lines.py + reading3.py, sharing no layout code with the paths) read
otherwise and disputed.
Variants marked * are scoring only: the extractor was never tuned on them.

Usage: python benchmarks/bench_layouts.py [--items 120] [--workers 2] [--seed 0] [--only NAME ...] [-v]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from _report import result  # run as a script: benchmarks/ is on sys.path

from blindmcq.corpus.extract import extract_items
from blindmcq.corpus.variants import VARIANTS, customs_records, render_variant
from blindmcq.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BLINDMCQ_SHARED_DATA", ROOT.parent / "shared" / "data"))
QUESTIONS = SHARED / "ua-customs-exam" / "questions.json"
SAMPLE = ROOT / "tests/fixtures/corpus/customs_sample.json"


def score(rendered, items) -> dict[str, list[str]]:
    truth = {i.id: i for i in rendered.items}
    got = {i.id: i for i in items}
    out: dict[str, list[str]] = {"exact": [], "disputed": [], "wrong": []}
    for item_id in dict.fromkeys([*truth, *got]):
        g, t = got.get(item_id), truth.get(item_id)
        if g is not None and g.status == "disputed":
            out["disputed"].append(item_id)
        elif g is not None and g == t:
            out["exact"].append(item_id)
        else:
            out["wrong"].append(item_id)
    return out


def _third(report) -> str:
    """How many items the third reading (corpus/reading3.py, no assemble) disputed."""
    third = report["files"][0].get("reading3")
    return f"reading3 differs on {len(third['differ'])}" if third else "no reading3"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=120, help="items per variant")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--only", nargs="*", default=None, help="variant names")
    parser.add_argument("--out", type=Path, default=None, help="keep the rendered PDFs here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each wrong or disputed item")
    args = parser.parse_args()
    source = args.questions if args.questions.exists() else SAMPLE
    records = customs_records(source)
    folder = args.out or Path(tempfile.mkdtemp(prefix="bench-layouts-"))
    print(f"items from {source} ({len(records)} records), {args.items} per variant, seed {args.seed}")
    print("* scoring only: the extractor was never tuned on these variants")
    header = f"{'variant':24} {'pages':>5} {'items':>5} {'exact':>5} {'disputed':>8} {'wrong':>5}  layout"
    print(header)
    print("-" * len(header))
    totals = {"variants": 0, "missed": 0, "items": 0, "wrong": 0, "disputed": 0}
    for variant in VARIANTS:
        if args.only and variant.name not in args.only:
            continue
        rendered = render_variant(variant, records, folder, n_items=args.items, seed=args.seed)
        totals["variants"] += 1
        start = time.perf_counter()
        try:
            items, report = extract_items([rendered.path], source="var", workers=args.workers)
        except InputError as exc:
            expected = bool(variant.stops) and re.search(variant.stops, str(exc)) is not None
            how = "stopped (as expected)" if expected else "stopped"
            print(f"{variant.name:24} {rendered.n_pages:5} {how}: {exc}")
            totals["missed"] += not expected
            continue
        bad = bool(variant.stops)
        if bad:
            print(f"{variant.name:24} {rendered.n_pages:5} read, but expected to stop ({variant.stops})")
        s = score(rendered, items)
        layout = report["files"][0]["layout"]
        name = variant.name + ("*" if variant.scoring_only else "")
        n = len(rendered.items)
        print(
            f"{name:24} {rendered.n_pages:5} {n:5} {len(s['exact']):5} {len(s['disputed']):8} "
            f"{len(s['wrong']):5}  {layout['orientation']}, {layout['fourth_column']}, "
            f"numbers {layout['number_forms']}, {_third(report)}, {time.perf_counter() - start:.1f} s"
        )
        # a variant that puts faults into many items by design (expect_disputed) has no cap on disputes
        bad |= bool(s["wrong"]) or (not variant.expect_disputed and len(s["disputed"]) > 0.01 * n)
        totals["missed"] += bad
        totals["items"] += n
        totals["wrong"] += len(s["wrong"])
        totals["disputed"] += len(s["disputed"])
        if args.verbose:
            truth = {i.id: i for i in rendered.items}
            got = {i.id: i for i in items}
            for kind in ("wrong", "disputed"):
                for item_id in s[kind]:
                    print(f"  {kind} {item_id}: got {got.get(item_id)}\n    want {truth.get(item_id)}")
    print("targets met" if not totals["missed"] else "TARGETS MISSED")
    met = totals["variants"] - totals["missed"]
    result(
        "layouts",
        f"{totals['wrong']} wrong, {totals['disputed']} disputed of {totals['items']:,} items",
        f"targets met by {met} of {totals['variants']} variants",
        met / totals["variants"] if totals["variants"] else None,
        "target: 0 wrong; disputes at most 1% per variant unless it prints faults by design",
    )
    return 1 if totals["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
