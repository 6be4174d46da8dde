"""Every technical term the reports use is defined in docs/definitions.md.

The pipeline's report (built from the shipped release with ``blindmcq report --from``) and an audit's
report (a small LEXam fixture), each with its tables' notes, are scanned for the vocabulary below; each
term a report uses must be bolded in docs/definitions.md. A term outside the vocabulary is noticed too:
every capitalised or technical word of the reports' prose, headings and table headers must be a
vocabulary term, a name the report itself sets (models, strategies) or an ordinary word, and every test
or interval a note names must be one of the vocabulary's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEFINITIONS = REPO / "docs" / "definitions.md"

# term, as docs/definitions.md bolds it -> how a report uses it (regex, case-sensitive)
VOCABULARY: dict[str, str] = {
    "Holm": r"\bHolm(?:-adjusted)?\b",
    "Holm p": r"\bHolm p\b",
    "One-sided exact binomial on items": r"one-sided exact binomial",
    "Chi-square against uniform slots, per N": r"chi-square against uniform slots",
    "Cohen's w": r"Cohen's w",
    "Chi-square test of failed x key slot": r"chi-square test of failed",
    "Exact McNemar": r"McNemar",
    "Exact sign test": r"sign test",
    "items up / down": r"items up / down",
    "Power": r"\bpower\b",
    "smallest detectable accuracy": r"would detect an accuracy",
    "Pearson r": r"Pearson r",
    "Not tested": r"is not tested|too few to test",
    "No data": r"\bNo data\b",
    "Fisher-z": r"Fisher-z",
    "same items": r"same items",
    "disjoint halves": r"disjoint halves",
    "Wilson": r"\bWilson\b",
    "Item-level interval": r"item-level (?:interval|beta)|beta interval",
    "effective sample size": r"effective sample size",
    "beta (Clopper-Pearson) interval": r"beta interval|Clopper-Pearson",
    "Rao-Scott": r"Rao-Scott",
    "design effect": r"design effect",
    "BCa bootstrap": r"\bBCa\b",
    "Cluster bootstrap": r"cluster bootstrap",
    "Newcombe's hybrid score interval": r"Gap \[95% CI\]",
    "Coverage": r"\bCoverage\b",
    "Option-text strategies": r"option-text strateg",
    "bank's verdict": r"\*\*The bank\.\*\*",
    "the option texts alone give the key away": r"option texts alone give the key away",
    "Tie credit": r"ties? credited 1/k|earns 1/k",
    "Tied items": r"Tied items",
    "Lexical search": r"[Ll]exical(?: search)?\b",
    "Statute coverage": r"Lexical search (?:applies|left out)|statutes do not cover",
    "Lexical search beyond length": r"Lexical search beyond length",
    "Best constant position": r"Best constant position",
    "Key-position shares": r"Key-position shares",
    "Key minus distractor length": r"key length minus mean distractor length|key minus distractor length",
    "Bank profile": r"Bank profile",
    "options that point into the stem": r"point into the stem",
    "Panel": r"\bpanel\b",
    "probe sample": r"probe sample",
    "Option-only": r"option-only",
    "Letter scoring": r"letter scoring",
    "Cloze": r"\bcloze\b",
    "per character": r"per character",
    "per token": r"per token",
    "raw": r"\(cloze, raw\)|\| cloze, raw \|",
    "Other-scheme answer rate": r"other-scheme answer rate",
    "Out tok.": r"Out tok\.",
    "Sets": r"\bSets?: ",
    "accepted": r"\b[Aa]ccepted\b",
    "headline set": r"headline set",
    "detail set": r"detail set",
    "rejected": r"\b[Rr]ejected\b",
    "untestable": r"\buntestable\b",
    "Retained share": r"retained share",
    "k per N": r"\bk per N\b",
    "false-rejection rate": r"false-rejection rate",
    "The gate's two nulls": r"two nulls",
    "redrawing picker": r"redraw",
    "consistent picker": r"consistent picker",
    "deterministic": r"read as deterministic",
    "evidence of a leak": r"evidence of a leak",
    "Err/Ref/Trunc": r"Err/Ref/Trunc",
    "Pick": r"\bPick (?:[A-Z]\b|\d+ \(\w+\))",  # "Pick B", or by position and the bank's label "Pick 2 (Б)"
    "Key": r"\bKey (?:[A-Z]\b|\d+ \(\w+\))",
    "Weight": r"\bWeight\b",
    "Habit*": r"\bHabit\*",
    "Excess*": r"\bExcess\*",
    "Agreement": r"\bAgreement\b|\bAgrees with\b",
    "Expected, independent given the key's slot": r"independent given the key's slot",
    "Agreement - expected": r"[Aa]greement - expected",
    "Pairs": r"\bPairs\b",
    "Gap": r"\bGap\b",
    "Gap, chance-adjusted": r"Gap, chance-adjusted",
    "Spread": r"\bSpread\b",
    "Key at s": r"\bKey at (?:[A-Z]\b|\d+ \(\w+\))",
    "Slot spread": r"Slot spread",
    "Sum": r"\bSum\b",
    "Position-free": r"Position-free",
    "Single-order": r"Single-order",
    "Distractor rewriting": r"Distractor rewriting",
    "Fluency": r"\bFluency\b",
    "AnswerPool": r"AnswerPool",
    "Ordinary": r"\b[Oo]rdinary\b",
    "pooled": r"\bpooled\b",
    "elimination credit": r"elimination credit",
    "Abstention on unanswerable": r"abstention on unanswerable",
    "false abstention": r"false abstention",
    "Chance / question": r"chance / question|Chance per question",
    "Set hit": r"set hit",
    "group right": r"group right",
    "Accuracy": r"\b[Aa]ccuracy\b",
    "chance": r"\b[Cc]hance\b",
    "Habit": r"\bhabit\b|\bHabit\b",
    "Excess": r"\bexcess\b|\bExcess\b",
    "Blind-solved count": r"[Ss]olved blind|blind-solved",
    "Gate": r"\bgate\b|\bGate\b",
    "Conditions": r"\b[Bb]lind\b|\b[Ff]ull\b",
    "Surface strategies": r"[Ss]urface strateg",
    "Forced placement": r"Forced placement",
    "Label schemes": r"label scheme",
    "Phrasings": r"\bphrasing",
    "Reasoning modes": r"[Rr]easoning modes?",
    "NonsenseQA": r"NonsenseQA",
    "failed": r"[Ff]ailed calls",
    "Binomial(2N, 1/N)": r"Binomial\(",
}

# Capitalised words a report may use without a definition: ordinary English at a sentence's or a
# cell's start, table and figure names, label letters, the paper's bank names.
ORDINARY = set(
    """
A B C D E F G H N P I The This That These No On Of In At If It Its Each Every One Past How Here Where When
What Set Table Figure Figures Tables Model Models Strategy Items Item Measure Value Labels Labels Phrasing
Reasoning Corpus Interventions Settings Warning Verification Expected Solved Intervals Tests Unit Before
Left Options Option Mean Scoring Condition All Both Either Only Probed Also Without With Under Over Do
Does Not Quote Read See
Highest Positional Columns CI MMLU's MMLU LEXam UA-JudgeExam ZNO
""".split()
)
GENERIC_BEFORE = {  # words that may precede "interval", "test", "bootstrap" without naming a method
    "the", "their", "its", "own", "and", "or", "an", "a", "95%", "one-sided", "two-sided", "exact",
    "unadjusted", "holm-adjusted", "this", "each", "that", "those", "these", "excess*", "habit*",
    "narrow", "items", "one", "whose", "percentile",
}  # fmt: skip


def defined_terms() -> set[str]:
    """The bold spans of docs/definitions.md, lowercased, markdown escapes removed."""
    text = DEFINITIONS.read_text(encoding="utf-8")
    spans = re.findall(r"\*\*((?:\\\*|[^*])+)\*\*", text)
    return {" ".join(span.replace("\\", "").split()).lower() for span in spans}


def visible_text(report: str) -> str:
    """Prose, headings, captions and table headers of a Markdown report: table bodies (numbers,
    names) and code spans dropped."""
    kept, previous = [], ""
    for line in report.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                kept.append(line)  # the header row
        elif not line.startswith("!["):
            kept.append(line)
        previous = line
    return re.sub(r"`[^`]*`", " ", "\n".join(kept))


def names_of(report: str) -> set[str]:
    """Names the report itself sets: models, strategies and settings (table bodies' first cells and
    the settings table's values), split into words."""
    names: set[str] = set()
    previous = ""
    for line in report.splitlines():
        if line.startswith("|") and previous.startswith("|") and not set(line) <= set("|-"):
            for cell in line.strip("|").split("|")[:2]:
                names |= set(re.split(r"[\s,()/]+", cell.strip()))
        previous = line
    return {n for n in names if n}


def used_terms(report: str) -> list[str]:
    text = visible_text(report)
    return sorted({term for term, pattern in VOCABULARY.items() if re.search(pattern, text)})


def undefined(report: str) -> list[str]:
    known = defined_terms()
    return [t for t in used_terms(report) if not any(t.lower() in span for span in known)]


def unlisted(report: str) -> list[str]:
    """Capitalised or technical words and named tests/intervals that no vocabulary term covers."""
    text = visible_text(report)
    covered = set()
    for pattern in VOCABULARY.values():
        for m in re.finditer(pattern, text):
            covered |= set(re.findall(r"[\w*'-]+", m.group(0)))
    allowed = ORDINARY | names_of(report) | covered
    words = set(re.findall(r"(?<![\w`])([\w'-]*[A-Z][\w'-]*\*?)", text))
    out = sorted(w for w in words if w not in allowed and w.rstrip("*") not in allowed
                 and not re.fullmatch(r"[A-Z]?\d[\w.-]*|k?=\d+|N=\d+|N's|per-N", w))  # fmt: skip
    vocab_words = {w.lower() for term in VOCABULARY for w in re.findall(r"[\w*'-]+", term)}
    for m in re.finditer(r"([\w*%'-]+) (?:intervals?|tests?|bootstrap)\b", text):
        word = m.group(1).lower()
        if word not in GENERIC_BEFORE and word not in vocab_words:
            out.append(m.group(0))
    return out


def _read(out: Path) -> str:
    """``report.md`` and every table with its note (``tables/tables.md``) of a report folder."""
    return "\n\n".join((out / name).read_text(encoding="utf-8") for name in ("report.md", "tables/tables.md"))


@pytest.fixture(scope="module")
def release_report(shipped_report) -> str:
    assert shipped_report.returncode == 0, shipped_report.stderr[-2000:]
    return _read(shipped_report.out)


@pytest.fixture(scope="module")
def audit_report(lexam_audit) -> str:
    assert lexam_audit.returncode == 0, lexam_audit.error
    return _read(lexam_audit.out)


def test_every_term_of_the_release_report_is_defined(release_report: str) -> None:
    assert len(used_terms(release_report)) > 30
    assert undefined(release_report) == []


def test_the_release_report_uses_no_term_outside_the_vocabulary(release_report: str) -> None:
    assert unlisted(release_report) == []


def test_every_term_of_the_audit_report_is_defined(audit_report: str) -> None:
    assert len(used_terms(audit_report)) > 20
    assert undefined(audit_report) == []


def test_the_audit_report_uses_no_term_outside_the_vocabulary(audit_report: str) -> None:
    assert unlisted(audit_report) == []


def test_the_checks_notice_an_undefined_and_an_unlisted_term() -> None:
    report = (
        "## Table 11\n\nIntervals: Rao-Scott at the design effect; p from the Frobnitz test, with "
        "a Zeta-adjusted bound.\n\n| Model | Quux |\n|---|---|\n| m1 | 0.5 |\n"
    )
    assert {"Rao-Scott", "design effect"} <= set(used_terms(report))
    assert undefined(report) == []
    assert unlisted(report) == ["Frobnitz", "Quux", "Zeta-adjusted", "Frobnitz test"]
    terms = dict(VOCABULARY)
    VOCABULARY["Frobnitz statistic"] = r"Frobnitz"
    try:
        assert undefined(report) == ["Frobnitz statistic"]
    finally:
        VOCABULARY.clear()
        VOCABULARY.update(terms)
