"""Which language a bank is in, and whether lexical search over the statutes can measure anything on it.

Lexical search matches option words against the statutes (BM25); on a bank in another language it would
only measure shared loanwords and numbers. So it runs only when the bank's language is the statutes'
(the bundled statutes are Ukrainian): the bank's language is declared (the dataset config's
``language``, the audit's ``--language``) or detected from the script of its text, and the statutes'
is the statutes config's ``language`` (default ``uk``). Otherwise the lexical row is absent and the
reason is written where the row would be (the audit's report, the pipeline's Table 2 note and findings).
"""

from __future__ import annotations

from collections.abc import Sequence

from blindmcq.config.schema import Config, Statutes
from blindmcq.datasets.items import Item

# the bundled statutes: four Ukrainian acts (conf/statutes/*.yaml); the schema's default `language`
STATUTES_LANGUAGE = Statutes().language


def bank_language(items: Sequence[Item]) -> str:
    """``uk`` when most letters are Cyrillic, else ``latin`` (the script does not tell en from de)."""
    text = " ".join(f"{item.question} {' '.join(item.options)}" for item in items)
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "unknown"
    cyrillic = sum("\u0400" <= c <= "\u04ff" for c in letters)
    return "uk" if cyrillic / len(letters) > 0.5 else "latin"


def lexical_skip_reason(
    language: str, statutes_language: str = STATUTES_LANGUAGE, statutes: str = ""
) -> str | None:
    """Why lexical search over the statutes is not run on a bank in ``language`` (None: it runs)."""
    if language == statutes_language:
        return None
    named = f" ({statutes})" if statutes else ""
    return (
        f"Lexical search skipped: the statutes{named} are in '{statutes_language}', the bank is "
        f"'{language}'; searching them would measure nothing."
    )


def run_language(config: Config, items: Sequence[Item]) -> tuple[str, str]:
    """The bank's language in a pipeline run and how it was found: ``dataset.language`` if declared,
    else detected from the items' script."""
    declared = config.dataset.language if config.dataset else None
    return (str(declared), "declared") if declared else (bank_language(items), "detected from the script")


def lexical_absent(config: Config, items: Sequence[Item]) -> str | None:
    """In a pipeline run (``config``: the typed composed config): why lexical search is absent (None: it
    runs)."""
    language, how = run_language(config, items)
    statutes = config.statutes or Statutes()
    # an empty language reads as the bundled statutes'
    reason = lexical_skip_reason(language, statutes.language or STATUTES_LANGUAGE)
    return None if reason is None else f"{reason[:-1]} (bank language {how})."
