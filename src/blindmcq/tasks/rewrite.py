"""Distractor rewriting: a new bank version whose distractors look like the key, keys untouched.

Two rewriters (config ``rewriter``):

``model``
    A model (any backend) rewrites each distractor under ``PROMPTS[language]``, the bank named by the
    dataset's ``description`` (``BANK``: neutral words without one): match the key's register and
    length, stay wrong, answer with the rewritten option on one line. The first non-empty line of the
    generation is taken, stripped of quotes, a leading dash or label.
``length_match``
    No model: each distractor is moved toward the key's length in characters. One within
    ``tolerance`` x key length is kept. A shorter one is padded: ", " and then the words of filler
    fragments until its length is closest to the key's. A fragment is drawn (seeded by seed, item id
    and option index) from ``pad_source``: ``bank`` = the distractors of the other items of the same
    bank (text already known to be wrong there), ``statutes`` = sentences of the provisions of the
    item's act (``meta.act`` = provision ``act_title``; all provisions when no act matches). A longer
    one is cut at the word boundary closest to the key's length, trailing punctuation dropped.

Either way an item is never dropped and its key and stem are never changed. A rewrite that fails
(call error, refusal, empty, equal to the key or to another option) keeps the original distractor,
and the reason is recorded per option in ``meta.rewrite.status``: ``rewritten``, ``padded``,
``trimmed`` (applied); ``within_tolerance``, ``kept`` (nothing to do); ``error``, ``refused``,
``empty`` (no letters), ``echo`` (repeats a template cue, or ends with ":"), ``equals_key``,
``duplicate`` (failed, original kept). ``meta.rewrite`` also holds
``source_item``, ``rewriter``, ``model``, ``prompt_sha256`` (model rewriter), ``original_options`` and
``changed`` (option indices whose text changed).

Fluency scores (``fluency_scores``): each changed distractor before and after and each such item's key,
scored by a cloze model after the answer cue alone, one request per text through the engine and its
response cache; the stage writes them (``write_fluency``) and the analysis reads its figures from them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.atomic import write_csv, write_text
from blindmcq.backends.base import Backend, ModelRequest
from blindmcq.backends.registry import abilities_for, make_backend
from blindmcq.config.schema import LocalModel, ModelSchema, RewriteIntervention, any_model_config
from blindmcq.datasets.items import Item
from blindmcq.engine.run import run_requests
from blindmcq.errors import ConfigError, InputError
from blindmcq.tasks.bank_words import bank_words, fill_bank
from blindmcq.tasks.probe import effective_max_tokens
from blindmcq.vocabulary import FAILED_STATUSES, PromptLanguage

PROMPTS: dict[PromptLanguage, str] = {
    "uk": (
        "Ви редагуєте тестове запитання {rewrite_exam_uk}. Перепишіть неправильний варіант відповіді "
        "так, щоб він залишився неправильним, але стилем, {rewrite_terms_uk} і довжиною (близько "
        "{key_chars} символів) був схожий на правильний варіант. Не копіюйте правильний варіант і не "
        "робіть переписаний варіант правильним. Напишіть лише переписаний варіант одним рядком.\n\n"
        "Запитання: {question}\n"
        "Правильний варіант: {key}\n"
        "Неправильний варіант: {distractor}\n"
        "Переписаний неправильний варіант:"
    ),
    "en": (
        "You are editing a question from {rewrite_exam_en}. Rewrite the wrong answer option so that it stays "
        "wrong but matches the correct option in register, {rewrite_terms_en} and length (about "
        "{key_chars} characters). Do not copy the correct option and do not make the rewritten option "
        "correct. Write only the rewritten option, on one line.\n\n"
        "Question: {question}\n"
        "Correct option: {key}\n"
        "Wrong option: {distractor}\n"
        "Rewritten wrong option:"
    ),
}
# the bank placeholders of each template and their neutral words; the dataset's ``description`` fills
# them (``tasks.bank_words``: ``rewrite_exam_uk`` falls back to ``exam_uk``, ``rewrite_exam_en`` to
# ``exam_en``)
BANK: dict[PromptLanguage, dict[str, str]] = {
    "uk": {"rewrite_exam_uk": "з кількома варіантами відповіді", "rewrite_terms_uk": "термінологією"},
    "en": {"rewrite_exam_en": "a multiple-choice test", "rewrite_terms_en": "terminology"},
}
_PER_REQUEST = ("question", "key", "distractor", "key_chars")
_LEAD = re.compile(r"^\s*(?:[-*•–—]\s*|[A-Za-zА-ЯІЇЄҐа-яіїєґ0-9][.)]\s+)?[\"'«“„]*")
_TRAIL = re.compile(r"[\"'»”]*\s*$")
_ECHO = re.compile(
    r"(правильн\w* варіант|переписан\w*|запитання:|correct option|wrong option|rewritten|question:)", re.I
)
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+|\n+")


def prompt_sha256(template: str) -> str:
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


_SCHEMA = RewriteIntervention()


def rewrite_template(language: PromptLanguage, description: Any = None) -> str:
    """The model rewriter's template in ``language``, naming the bank as the dataset's ``description``
    says (neutral words without one); its per-request fields stay placeholders."""
    return fill_bank(PROMPTS[language], bank_words(BANK[language], description), _PER_REQUEST)


@dataclass(frozen=True)
class RewriteConfig:
    """The fields of ``intervention.rewrite`` the rewriter reads, built from the schema's record
    (``of``): its defaults, types and ranges are the schema's; only the checks across fields and against
    this module's templates are made here."""

    rewriter: str = _SCHEMA.rewriter
    language: PromptLanguage = _SCHEMA.language
    model: ModelSchema | None = None  # the rewriting model's config, typed (the stage resolves a name)
    max_tokens: int = _SCHEMA.max_tokens
    tolerance: float = _SCHEMA.tolerance
    pad_source: str = _SCHEMA.pad_source
    statutes: str | None = _SCHEMA.statutes  # provisions file for pad_source statutes
    seed: int = _SCHEMA.seed

    @classmethod
    def of(cls, schema: RewriteIntervention, prefix: str = "intervention.rewrite") -> RewriteConfig:
        """The rewriter's fields of a checked ``intervention.rewrite``, whose ``model`` the stage has
        resolved to a model config (typed here, a stand-in's too); errors name ``prefix.key``."""
        values = {f.name: getattr(schema, f.name) for f in dataclasses.fields(cls)}
        model = values.pop("model")
        if schema.pad_source == "statutes" and schema.rewriter == "length_match" and not schema.statutes:
            raise ConfigError(f"{prefix}.statutes", "pad_source statutes needs a provisions file")
        if schema.rewriter == "model" and not model:
            raise ConfigError(f"{prefix}.model", "the model rewriter needs a model")
        if isinstance(model, str):
            raise ConfigError(f"{prefix}.model", f"expected a model config, got the name {model!r} unread")
        return cls(**values, model=None if model is None else any_model_config(model))

    def model_cfg(self) -> ModelSchema:
        """The rewriting model's config."""
        if self.model is None:
            raise ConfigError("intervention.rewrite.model", "the model rewriter needs a model config")
        return self.model


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def clean_generation(text: str) -> str:
    """The first non-empty line of a generation, without quotes, a leading dash or a label."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return _TRAIL.sub("", _LEAD.sub("", line)).strip()


def check_rewrite(options: Sequence[str], key: int | None, index: int, text: str) -> str:
    """``ok`` or why ``text`` cannot replace option ``index`` (the original is then kept)."""
    if not any(ch.isalpha() for ch in text):  # blank, or a bare "1." from a base model
        return "empty"
    if text.rstrip().endswith(":") or _ECHO.search(text):  # a base model continuing the template
        return "echo"
    if key is not None and _norm(text) == _norm(options[key]):
        return "equals_key"
    if any(_norm(text) == _norm(o) for j, o in enumerate(options) if j != index):
        return "duplicate"
    return "ok"


_APPLY = ("rewritten", "padded", "trimmed")


def _with_rewrites(
    item: Item, texts: Mapping[int, str], status: Mapping[int, str], provenance: Mapping[str, Any]
) -> Item:
    """Apply the accepted rewrites in option order, each checked against the options as they stand."""
    options = list(item.options)
    final: dict[str, str] = {}
    for index in sorted(texts):
        verdict = status[index]
        if verdict in _APPLY:
            problem = check_rewrite(options, item.key, index, texts[index])
            if problem == "ok":
                options[index] = texts[index]
            else:
                verdict = problem
        final[str(index)] = verdict
    assert options[item.key] == item.options[item.key]  # type: ignore[index]  # the key is never touched
    meta = {
        **item.meta,
        "rewrite": {
            **provenance,
            "source_item": item.id,
            "original_options": list(item.options),
            "status": final,
            "changed": [i for i, (a, b) in enumerate(zip(item.options, options, strict=True)) if a != b],
        },
    }
    return dataclasses.replace(item, options=tuple(options), meta=meta)


# ------------------------------------------------------------------- model rewriter


def rewrite_requests(
    items: Sequence[Item],
    conf: RewriteConfig,
    model_name: str,
    max_tokens: int | None = None,
    description: Any = None,
) -> list[tuple[tuple[str, int], ModelRequest]]:
    """One generation request per distractor of every usable item, each with its (item id, option index).
    ``max_tokens``: the model's effective room (default ``conf.max_tokens``); ``description``: the
    dataset's, naming the bank in the prompt (``rewrite_template``)."""
    template = rewrite_template(conf.language, description)
    room = int(max_tokens if max_tokens is not None else conf.max_tokens)
    calls = []
    for item in items:
        if not item.usable:
            continue
        key_text = item.options[item.key]  # type: ignore[index]
        for j, distractor in enumerate(item.options):
            if j == item.key:
                continue
            user = template.format(
                question=item.question, key=key_text, distractor=distractor, key_chars=len(key_text)
            )
            request = ModelRequest(
                model=model_name, system=None, user=user, max_tokens=room,
                # the template ends with its own cue: a base model gets no extra "Відповідь:"
                extra={"answer_prefix": "", "item_id": item.id},
            )  # fmt: skip
            calls.append(((item.id, j), request))
    return calls


def rewrite_with_model(
    items: Sequence[Item],
    conf: RewriteConfig,
    *,
    cache: str | Path,
    backend: Backend | None = None,
    progress: bool = False,
    description: Any = None,
) -> list[Item]:
    model_cfg = conf.model_cfg()
    backend = backend or make_backend(model_cfg)
    # a model that reasons before it answers spends its room there first (tasks.probe)
    room = effective_max_tokens(model_cfg, conf.max_tokens)
    calls = rewrite_requests(items, conf, model_cfg.name, room, description)
    results = run_requests(
        [r for _, r in calls], backend, cache=cache,
        concurrency=model_cfg.concurrency, progress=progress, desc="rewrite",
    )  # fmt: skip
    texts: dict[str, dict[int, str]] = {}
    status: dict[str, dict[int, str]] = {}
    for ((item_id, j), _), result in zip(calls, results, strict=True):
        response = result.response
        # a rewrite cut off at the token limit is an unfinished phrase: rejected, the original kept
        truncated = response.status == "ok" and response.meta.get("stop_reason") == "max_tokens"
        failed = response.status in FAILED_STATUSES or truncated
        texts.setdefault(item_id, {})[j] = "" if failed else clean_generation(response.text)
        status.setdefault(item_id, {})[j] = (
            ("truncated" if truncated else response.status) if failed else "rewritten"
        )
    provenance = {
        "rewriter": "model",
        "model": model_cfg.name,
        "backend": backend.name,
        "language": conf.language,
        "prompt_sha256": prompt_sha256(rewrite_template(conf.language, description)),
    }
    return [
        _with_rewrites(item, texts.get(item.id, {}), status.get(item.id, {}), provenance)
        if item.usable
        else item
        for item in items
    ]


# ------------------------------------------------------------------- length-match rewriter


def _rng(seed: int, item_id: str, index: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{item_id}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


_CLAUSE_END = re.compile(r"[,;:](?=\s)|\s[–—-](?=\s)")  # where a clause ends: , ; : or a spaced dash
PAD_DRAWS = 200  # fragments tried when padding (bounded, seeded)


def pad_or_trim(text: str, target: int, fragments: Sequence[str], rng: random.Random) -> tuple[str, str]:
    """``text`` moved towards ``target`` characters without breaking a phrase: (new text, "padded" |
    "trimmed" | "kept").

    Trimming keeps whole clauses only (it cuts where a clause ends: a comma, semicolon, colon or spaced
    dash), never mid-phrase: a distractor cut to "такого" would be the one ill-formed option, a fluency
    cue that the key is the other one. Padding appends whole phrases (``fragments``: other items'
    distractors, or statute sentences), each only if it brings the length closer. Where no whole clause
    or phrase helps, the text is kept.
    """
    if len(text) > target:
        best = text
        for cut in _CLAUSE_END.finditer(text):
            candidate = text[: cut.start()].rstrip(" ,;:-–—")
            if candidate and abs(len(candidate) - target) < abs(len(best) - target):
                best = candidate
        return (best, "trimmed") if best != text else (text, "kept")
    phrases = [f.strip().rstrip(" .;:,") for f in fragments if f.strip()]
    if not phrases:
        return text, "kept"
    out = text.rstrip(" .;")
    for _ in range(min(PAD_DRAWS, 4 * len(phrases))):
        phrase = rng.choice(phrases)
        candidate = f"{out}, {phrase[:1].lower()}{phrase[1:]}"
        if abs(len(candidate) - target) < abs(len(out) - target):
            out = candidate
        if abs(len(out) - target) <= 0.05 * target:
            break
    return (out, "padded") if out != text.rstrip(" .;") else (text, "kept")


def _statute_fragments(path: str) -> dict[str, list[str]]:
    from blindmcq.statutes.corpus import read_provisions

    by_act: dict[str, list[str]] = {}
    for provision in read_provisions(path):
        for sentence in _SENTENCE.split(provision.text):
            sentence = sentence.strip().rstrip(".;:")
            if len(sentence.split()) >= 3:
                by_act.setdefault(provision.act_title, []).append(sentence[:1].lower() + sentence[1:])
    return by_act


def _bank_fragments(items: Sequence[Item]) -> dict[str, list[tuple[str, str]]]:
    by_bank: dict[str, list[tuple[str, str]]] = {}
    for item in items:
        if item.usable:
            by_bank.setdefault(item.bank, []).extend(
                (item.id, o) for j, o in enumerate(item.options) if j != item.key and o.strip()
            )
    return by_bank


def rewrite_length_match(items: Sequence[Item], conf: RewriteConfig) -> list[Item]:
    bank = _bank_fragments(items)
    statutes = _statute_fragments(str(conf.statutes)) if conf.pad_source == "statutes" else {}
    every_statute = [s for sentences in statutes.values() for s in sentences]
    provenance = {
        "rewriter": "length_match",
        "model": None,
        "pad_source": conf.pad_source,
        "tolerance": float(conf.tolerance),
        "seed": int(conf.seed),
    }
    out = []
    for item in items:
        if not item.usable:
            out.append(item)
            continue
        if conf.pad_source == "bank":
            fragments = [text for source, text in bank.get(item.bank, []) if source != item.id]
        else:
            fragments = statutes.get(str(item.meta.get("act")), every_statute)
        target = len(item.options[item.key])  # type: ignore[index]
        texts: dict[int, str] = {}
        status: dict[int, str] = {}
        for j, option in enumerate(item.options):
            if j == item.key:
                continue
            if abs(len(option) - target) <= conf.tolerance * target:
                texts[j], status[j] = option, "within_tolerance"
                continue
            texts[j], status[j] = pad_or_trim(option, target, fragments, _rng(conf.seed, item.id, j))
        out.append(_with_rewrites(item, texts, status, provenance))
    return out


# ------------------------------------------------------------------- entry point and diff


def rewrite_items(
    items: Sequence[Item],
    conf: RewriteConfig,
    *,
    cache: str | Path = ":memory:",
    backend: Backend | None = None,
    progress: bool = False,
    description: Any = None,
) -> list[Item]:
    """The rewritten bank: same items, same order, same keys; unusable items pass through unchanged.
    ``description``: the dataset's, naming the bank in the model rewriter's prompt."""
    if conf.rewriter == "model":
        return rewrite_with_model(
            items, conf, cache=cache, backend=backend, progress=progress, description=description
        )
    return rewrite_length_match(items, conf)


def diff_frame(rewritten: Sequence[Item]) -> pd.DataFrame:
    """One row per distractor: original and rewritten text, lengths, and the rewrite status."""
    rows = []
    for item in rewritten:
        info = item.meta.get("rewrite")
        if not info or item.key is None:
            continue
        for j, original in enumerate(info["original_options"]):
            if j == item.key:
                continue
            rows.append({
                "item_id": item.id, "option": j, "status": info["status"].get(str(j), ""),
                "changed": j in info["changed"], "key_chars": len(item.options[item.key]),
                "original_chars": len(original), "rewritten_chars": len(item.options[j]),
                "original": original, "rewritten": item.options[j],
            })  # fmt: skip
    return pd.DataFrame(rows, columns=[
        "item_id", "option", "status", "changed", "key_chars", "original_chars", "rewritten_chars",
        "original", "rewritten",
    ])  # fmt: skip


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_diff(rewritten: Sequence[Item], out_dir: str | Path) -> pd.DataFrame:
    """``diff.csv`` and ``diff.md`` (original vs rewritten distractors per item) under ``out_dir``."""
    frame = diff_frame(rewritten)
    out_dir = Path(out_dir)
    write_csv(out_dir / "diff.csv", frame)
    lines = ["# Rewritten distractors", ""]
    for item in rewritten:
        part = frame[frame["item_id"] == item.id]
        if part.empty:
            continue
        lines += [
            f"## {item.id}",
            "",
            f"Key ({len(item.options[item.key])} chars): {_cell(item.options[item.key])}",
            "",
        ]  # type: ignore[index]
        lines += ["| option | status | original | rewritten |", "|---|---|---|---|"]
        lines += [
            f"| {r.option} | {r.status} | {_cell(r.original)} | {_cell(r.rewritten)} |"
            for r in part.itertuples()
        ]
        lines.append("")
    write_text(out_dir / "diff.md", "\n".join(lines))
    return frame


# ------------------------------------------------------------------- fluency scores

# one row per scored text: the item, the option's index, which text (``before``: a changed distractor's
# original, ``after``: its rewrite, ``key``: the item's key), the text, its mean per-token
# log-likelihood after the answer cue alone, its continuation tokens, the scoring model and the cache key
FLUENCY_COLUMNS = ("item_id", "option", "version", "text", "per_token", "n_tokens", "model", "request_hash")
# one sequence per forward pass: a score is the same floats whatever else the process scores (a batch's
# padding moves the last bits), and such a request has its own cache key, apart from the probe's batches
FLUENCY_BATCH_SIZE = 1


def fluency_model(model_cfg: ModelSchema) -> ModelSchema:
    """The config that scores option texts for fluency: a local model's weights under cloze scoring (a
    letter-scoring config is scored as cloze, its norm unchanged); any other config as it is."""
    if isinstance(model_cfg, LocalModel) and model_cfg.scoring != "cloze":
        return dataclasses.replace(model_cfg, scoring="cloze")
    return model_cfg


def fluency_requests(
    original: Sequence[Item], rewritten: Sequence[Item], model_name: str, answer_cue: str
) -> list[tuple[dict[str, Any], ModelRequest]]:
    """One cloze scoring request per text the fluency figures read, each with its row (``item_id``,
    ``option``, ``version``, ``text``): for each item whose distractors changed, in item order, the
    changed options' original texts (``before``), their rewrites (``after``) and the key (``key``), each
    after the answer cue alone (the blind context). Every request asks for one sequence per forward pass
    (``FLUENCY_BATCH_SIZE``); the same text of two items is one request to the engine."""
    calls = []
    for old, new in zip(original, rewritten, strict=True):
        changed = [j for j, (a, b) in enumerate(zip(old.options, new.options, strict=True)) if a != b]
        if not changed or old.key is None:
            continue
        texts = [(j, "before", old.options[j]) for j in changed]
        texts += [(j, "after", new.options[j]) for j in changed]
        texts.append((old.key, "key", old.options[old.key]))
        for j, version, text in texts:
            extra = {
                "option_texts": [text], "cloze_question": None, "answer_cue": answer_cue,
                "cloze_batch_size": FLUENCY_BATCH_SIZE, "item_id": old.id,
            }  # fmt: skip
            request = ModelRequest(
                model=model_name, system=None, user=answer_cue, choices=("1",), extra=extra
            )
            calls.append(({"item_id": old.id, "option": j, "version": version, "text": text}, request))
    return calls


def fluency_scores(
    original: Sequence[Item],
    rewritten: Sequence[Item],
    model_cfg: ModelSchema,
    answer_cue: str,
    *,
    cache: str | Path,
    backend: Backend | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """The fluency rows (``FLUENCY_COLUMNS``) of ``fluency_requests``, scored by ``model_cfg``'s weights
    under cloze scoring (``fluency_model``) through the engine and its response cache (``cache``), so a
    rerun pays for no text already scored. ``backend``: a built backend to use instead (it must score
    cloze requests). A call that failed is an InputError naming its item (failures are not cached: the
    next run retries them)."""
    cfg = fluency_model(model_cfg)
    backend = backend or make_backend(cfg)
    if not abilities_for(cfg, backend).score_options:
        raise ConfigError("model.scoring", f"backend {backend.name} cannot score option texts (cloze)")
    calls = fluency_requests(original, rewritten, cfg.name, answer_cue)
    results = run_requests(
        [r for _, r in calls], backend, cache=cache, progress=progress, desc="fluency", batch_size=1
    )
    rows = []
    for (row, _), result in zip(calls, results, strict=True):
        response, meta = result.response, result.response.meta
        per_token = meta.get("per_token") if isinstance(meta, Mapping) else None
        if response.status != "ok" or not isinstance(per_token, list) or len(per_token) != 1:
            why = response.error or f"status {response.status}, no per_token score"
            raise InputError(f"fluency scoring of option {row['option']} failed: {why}", item=row["item_id"])
        n_tokens = meta.get("n_tokens") or [None]
        rows.append({
            **row, "per_token": float(per_token[0]),
            "n_tokens": None if n_tokens[0] is None else int(n_tokens[0]),
            "model": cfg.name, "request_hash": result.key,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(FLUENCY_COLUMNS))


def write_fluency(path: str | Path, scores: pd.DataFrame) -> None:
    """``scores`` (``FLUENCY_COLUMNS``) as JSON Lines, one row a line in frame order; floats as Python
    writes them, so reading a line gives the very double. No rows: an empty file."""

    def cell(value: Any) -> Any:  # a missing count (NaN in a number column) is null, never NaN
        return None if isinstance(value, float) and value != value else value

    records = scores.to_dict(orient="records")  # native Python values
    lines = [json.dumps({c: cell(row[c]) for c in FLUENCY_COLUMNS}, ensure_ascii=False) for row in records]
    write_text(path, "".join(line + "\n" for line in lines))
