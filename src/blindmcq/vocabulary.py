"""The project's closed word lists, each defined once as a ``Literal`` (SPEC, "Items", "Presentations",
"Per-call record"), with the tuple of its words for checks and messages.

The frozen records type their fields with these (``Item.status``, ``PredictionRecord.condition``,
``Parsed.status``, the config groups' ``conditions`` and ``format``), as inspect_ai's log types its
fields; code that checks or lists the words imports the tuple from here, never spells it again.
A leaf: it imports nothing of the project; the other leaves may use it.
"""

from __future__ import annotations

from typing import Literal, get_args

# A presentation's condition: options only, or stem and options.
Condition = Literal["blind", "full"]
CONDITIONS: tuple[Condition, ...] = get_args(Condition)

# An item's status in items.jsonl; disputed: the two extraction paths disagree.
ItemStatus = Literal["ok", "excluded", "malformed", "disputed"]
ITEM_STATUSES: tuple[ItemStatus, ...] = get_args(ItemStatus)

# How an answer was read back (a prediction row's parse_status).
ParseStatus = Literal["ok", "unparseable", "other_scheme", "refused", "error", "uncertain", "tie"]
PARSE_STATUSES: tuple[ParseStatus, ...] = get_args(ParseStatus)
# A call that failed before the model answered: its call status, which its row keeps as its parse status
# (docs/statistics.md, failed_calls).
FailedStatus = Literal["error", "refused"]
FAILED_STATUSES: tuple[FailedStatus, ...] = get_args(FailedStatus)

# How a backend's call ended (``backends.base.Response.status``).
CallStatus = Literal["ok", "refused", "error"]
CALL_STATUSES: tuple[CallStatus, ...] = get_args(CallStatus)

# The surface strategies (``surface.py``): a probed heuristic model may also be ``random``.
SurfaceStrategy = Literal["constant", "longest", "shortest", "most_words"]
SURFACE_STRATEGIES: tuple[SurfaceStrategy, ...] = get_args(SurfaceStrategy)
# the slot ``constant`` answers where none is given (``surface.pick``; the heuristic model's ``slot``)
CONSTANT_SLOT = 0
# the statute search that Table 2 reports beside the surface strategies (its row and the explorer's tag)
LEXICAL = "lexical_search"

# How lexical search breaks a tie between equally scored options: a seeded draw, or the first.
TieBreak = Literal["random", "first"]

# How a local model answers (docs/cloze.md): the answer label's probability, or each option's text
# scored as a continuation; and how a text's score is normalised (sum, per token, per character).
Scoring = Literal["letter", "cloze"]
SCORINGS: tuple[Scoring, ...] = get_args(Scoring)
ClozeNorm = Literal["raw", "token", "char"]

# The order id of the options as published: rotation 0 (``tasks.presentations``: rot0..rotN-1, rev0..).
PUBLISHED_ORDER = "rot0"

# The table formats a generic bank is read in; hf: a folder datasets' save_to_disk wrote.
BankFormat = Literal["csv", "tsv", "jsonl", "parquet", "xlsx", "hf"]
BANK_FORMATS: tuple[BankFormat, ...] = get_args(BankFormat)
# The formats whose first row may be data rather than a header.
HEADERLESS_FORMATS: tuple[BankFormat, ...] = ("csv", "tsv", "xlsx")

# How a generic bank writes its key: 0-based index, 1-based index, the option's label, its text.
KeyFormat = Literal["index", "index1", "label", "text"]
KEY_FORMATS: tuple[KeyFormat, ...] = get_args(KeyFormat)

# The languages the interventions' prompts are written in (``tasks.answerpool.TEXT`` and
# ``tasks.rewrite.PROMPTS`` have the words of each).
PromptLanguage = Literal["uk", "en"]
PROMPT_LANGUAGES: tuple[PromptLanguage, ...] = get_args(PromptLanguage)

# NonsenseQA's few-shot skews (``datasets.nonsense``): where the examples' keys sit (every one in slot A,
# 70% in A, even); ``FewShot`` adds ``none``, no examples, in the order the report lists them.
FewShotSkew = Literal["all_a", "a70", "uniform"]
FEWSHOT_SKEWS: tuple[FewShotSkew, ...] = get_args(FewShotSkew)
FewShot = Literal[FewShotSkew, "none"]
FEWSHOTS: tuple[FewShot, ...] = get_args(FewShot)
# The answer protocols (conf/protocol): Select-and-Letter, Matched-and-Dashed; a presentation and a
# prediction row name theirs, and NonsenseQA runs each.
AnswerProtocol = Literal["sl", "md"]
ANSWER_PROTOCOLS: tuple[AnswerProtocol, ...] = get_args(AnswerProtocol)
