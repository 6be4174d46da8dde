"""Bad inputs tried systematically (hypothesis): item files, configs, model responses and predictions files.

Each must give a clear ``BlindMCQError`` (InputError/ConfigError naming the file, line or key) or a
recorded status; never another exception type, never a silent drop.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blindmcq.answers.predictions import read_predictions, write_predictions
from blindmcq.answers.records import PARSE_STATUSES, PredictionRecord
from blindmcq.backends.base import ModelResponse
from blindmcq.backends.registry import make_backend
from blindmcq.config.files import load_group, load_label_schemes, read_group
from blindmcq.config.schema import Config, model_config, validate, validate_group
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import BlindMCQError, ConfigError, InputError
from blindmcq.labels import label_symbols_by_scheme
from blindmcq.protocols.components import protocol_spec
from blindmcq.tasks.parsing import interpret, parse_answer
from blindmcq.tasks.presentations import build_presentations, present

FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
json_scalars = (
    st.none() | st.booleans() | st.integers(-5, 10) | st.floats(allow_nan=False) | st.text(max_size=8)
)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=6), inner, max_size=4), max_leaves=10)  # fmt: skip
GOOD_ITEM = {
    "id": "t-b-1", "source": "t", "bank": "b", "number": 1, "question": "Q?",
    "options": ["один", "два", "три", "чотири"], "key": 2, "status": "ok", "flags": [],
}  # fmt: skip
ITEM_KEYS = [*GOOD_ITEM, "file", "page", "meta"]


def _tmpdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="fuzz-"))


# ---------------------------------------------------------------- item files


@st.composite
def item_records(draw: st.DrawFn) -> Any:
    """A good record with keys dropped, retyped or pushed out of range, or any JSON at all."""
    kind = draw(st.sampled_from(["mutated", "any"]))
    if kind == "any":
        return draw(json_values)
    record = dict(GOOD_ITEM)
    for key in draw(st.lists(st.sampled_from(ITEM_KEYS), max_size=3, unique=True)):
        action = draw(st.sampled_from(["drop", "retype", "range"]))
        if action == "drop":
            record.pop(key, None)
        elif action == "retype":
            record[key] = draw(json_values)
        else:
            record[key] = draw(st.sampled_from([-1, 4, 99, 10**30, "", [], ["x"], "malformed", "excluded"]))
    return record


@FUZZ
@given(records=st.lists(item_records(), min_size=1, max_size=4), garbage=st.booleans())
def test_item_files_give_an_input_error_or_items(records: list[Any], garbage: bool) -> None:
    path = _tmpdir() / "items.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    if garbage:
        lines.insert(len(lines) // 2, "{not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        items = read_items(path)
    except InputError as exc:
        assert str(path) in str(exc) and exc.line is not None
        return
    assert len(items) == len(lines)  # nothing accepted is dropped
    for item in items:
        assert item.key is None or 0 <= item.key < item.n_options


# ---------------------------------------------------------------- configs

BACKEND_KEYS = ["name", "backend", "model_id", "regions", "strategy", "slot", "faults", "retry", "inner",
                "latency_s", "concurrency", "seed", "thinking"]  # fmt: skip


@st.composite
def model_configs(draw: st.DrawFn) -> Any:
    cfg: dict[str, Any] = {
        "backend": draw(
            st.sampled_from(["bedrock", "heuristic", "fault", "instant", "slow", "nope", None, 3])
        )
    }
    for key in draw(st.lists(st.sampled_from(BACKEND_KEYS), max_size=4, unique=True)):
        numeric = key in ("seed", "concurrency", "latency_s", "slot")
        nested = key in ("faults", "retry")
        if nested:
            cfg[key] = draw(
                st.dictionaries(
                    st.sampled_from(["throttle", "max_attempts", "x"]), st.integers(-2, 9) | st.floats(0, 2)
                )
                | json_values
            )
        else:
            cfg[key] = draw((st.integers(-3, 20) | st.floats(0, 5) | json_values) if numeric else json_values)
    return draw(st.sampled_from([cfg, draw(json_values)]))


@FUZZ
@given(cfg=model_configs())
def test_make_backend_gives_a_config_error_or_a_backend(cfg: Any) -> None:
    try:
        backend = make_backend(model_config(cfg))  # typed where it enters, then built
    except BlindMCQError:
        return
    assert isinstance(backend.name, str) and callable(backend.complete)


@pytest.mark.parametrize(
    "cfg",
    [{"backend": "slow", "latency_s": None}, {"backend": "fault", "seed": []}, {"backend": "slow",
     "latency_s": 1, "concurrency": "many"}, {"backend": "fault", "faults": ["x"]},
     {"backend": "fault", "retry": True}, {"backend": "fault", "retry": {"max_attempts": "x"}}],
)  # fmt: skip
def test_make_backend_junk_numbers_name_the_key(cfg: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        make_backend(model_config(cfg))


@FUZZ
@given(cfg=st.dictionaries(st.sampled_from(["name", "fewshot", "labels", "order", "extraction", "n_shots",
                                            "other"]), json_values, max_size=6))  # fmt: skip
def test_protocol_spec_gives_a_config_error_or_a_spec(cfg: dict[str, Any]) -> None:
    try:
        spec = protocol_spec(validate_group("protocol", cfg))
    except ConfigError as exc:
        assert exc.key.startswith("protocol.")
        return
    assert spec.extraction in ("letter", "match")


ITEMS = [
    Item(
        id=f"t-b-{n}",
        source="t",
        bank="b",
        number=n,
        question="Питання?",
        options=("один", "два", "три", "чотири")[: 2 + n % 3],
        key=n % 2,
    )
    for n in range(1, 5)
]
PROMPT_KEYS = ["name", "language", "blind", "full", "answer_instruction", "system", "or_word"]


@st.composite
def presentation_configs(draw: st.DrawFn) -> dict[str, Any]:
    prompt, labels = (  # as written: typed where they enter (validate_group), then rendered
        read_group("prompt", "original"),
        read_group("labels", draw(st.sampled_from(["latin", "dash"]))),
    )
    reasoning = read_group("reasoning", draw(st.sampled_from(["direct", "step_by_step"])))
    for group in (prompt, labels, reasoning):
        keys = list(group)
        for key in draw(st.lists(st.sampled_from([*keys, "x"]), max_size=2, unique=True)):
            if draw(st.booleans()):
                group.pop(key, None)
            else:
                templates = st.sampled_from(["{options}", "{bogus}", "{", "{question}", "x"])
                group[key] = draw(json_values | templates)
    return {
        "prompt": prompt, "labels": labels, "reasoning": reasoning,
        "conditions": draw(st.lists(st.sampled_from(["blind", "full", "sideways"]), min_size=1, max_size=2)),
        "blind_orders": draw(st.sampled_from(["all", ["rot0"], ["rot9"], "some"])),
        "forced": draw(st.booleans()), "protocol": draw(st.sampled_from(["sl", "md", "xx"])),
    }  # fmt: skip


@pytest.mark.parametrize("line", ["{bogus}", "{}", "{", {"": None}])
def test_bad_label_line_template_names_the_key(line: Any) -> None:
    labels = {**read_group("labels", "latin"), "line": line}
    with pytest.raises(ConfigError, match=r"labels(\.latin)?\.line"):
        build_presentations(
            ITEMS, conditions=["blind"], forced=False, prompt=load_group("prompt", "original"),
            labels=validate_group("labels", labels), reasoning=load_group("reasoning", "direct"),
            blind_orders="all",
        )  # fmt: skip


def test_non_string_prompt_template_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"prompt\.blind"):
        build_presentations(
            ITEMS, conditions=["blind"], forced=False,
            prompt=validate_group("prompt", {**read_group("prompt", "original"), "blind": True}),
            labels=load_group("labels", "latin"), reasoning=load_group("reasoning", "direct"),
            blind_orders="all",
        )  # fmt: skip


# ---------------------------------------------------------------- model responses

SYMBOLS = label_symbols_by_scheme(load_label_schemes())
P = present(
    ITEMS[1], condition="blind", order_id="rot0", order=(0, 1, 2, 3), prompt=load_group("prompt", "original"),
    labels=load_group("labels", "latin"), reasoning=load_group("reasoning", "direct"),
)  # fmt: skip
answers = st.text(max_size=80) | st.builds(
    lambda a, b, c: a + b + c,
    st.text(max_size=20),
    st.sampled_from(
        ["A", "Б", "Відповідь: C", "Answer: D", "**B**", "(E)", "<think>A</think>", "\\boxed{B}"]
    ),
    st.text(max_size=20),
)


@FUZZ
@given(text=answers, scheme=st.sampled_from(sorted(SYMBOLS)), n=st.integers(2, 6))
def test_parse_answer_always_returns_a_status(text: str, scheme: str, n: int) -> None:
    parsed = parse_answer(text, scheme, n, symbols=SYMBOLS)
    assert parsed.status in PARSE_STATUSES
    assert (parsed.slot is not None) == (parsed.status == "ok")
    assert parsed.slot is None or 0 <= parsed.slot < n


@FUZZ
@given(
    text=answers,
    status=st.sampled_from(["ok", "refused", "error"]),
    scores=st.none() | st.lists(st.floats(allow_infinity=True), min_size=4, max_size=4),
)
def test_interpret_always_returns_a_status(text: str, status: str, scores: list[float] | None) -> None:
    parsed = interpret(P, ModelResponse(text=text, status=status, choice_logprobs=scores), symbols=SYMBOLS)
    assert parsed.status in PARSE_STATUSES
    assert parsed.slot is None or 0 <= parsed.slot < P.n_options


# ---------------------------------------------------------------- predictions files


def _records(n: int) -> list[PredictionRecord]:
    return [
        PredictionRecord(
            item_id=f"t-b-{i}",
            model="m",
            condition="blind",
            phrasing="original",
            labels="latin",
            protocol="sl",
            reasoning="direct",
            order=[0, 1, 2, 3],
            order_id="rot0",
            forced_slot=None,
            key_slot=i % 4,
            n_options=4,
            picked_slot=0,
            picked_option=0,
            correct=i % 4 == 0,
            parse_status="ok",
            raw_response="A",
            input_tokens=10,
            output_tokens=1,
            latency_s=0.1,
            region="r",
            request_hash=f"{i:064x}",
            time="2025-01-01T00:00:00Z",
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def good_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("preds")
    out = {}
    for suffix in (".parquet", ".jsonl"):
        path = write_predictions(_records(6), folder / f"p{suffix}")
        out[suffix] = path.read_bytes()
    return out


@FUZZ
@given(data=st.data(), suffix=st.sampled_from([".parquet", ".jsonl"]))
def test_corrupted_predictions_give_an_input_error_or_every_row(
    good_files: dict[str, bytes], data: st.DataObject, suffix: str
) -> None:
    blob = bytearray(good_files[suffix])
    how = data.draw(st.sampled_from(["truncate", "flip", "splice"]))
    if how == "truncate":
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            at = data.draw(st.integers(0, len(blob) - 1))
            blob[at] = data.draw(st.integers(0, 255))
    else:
        at = data.draw(st.integers(0, len(blob)))
        blob[at:at] = data.draw(st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
    path = _tmpdir() / f"p{suffix}"
    path.write_bytes(bytes(blob))
    try:
        frame = read_predictions(path)
    except InputError as exc:
        assert str(path) in str(exc)
        return
    # what is read is whole: the same number of rows as non-empty lines / the file's own row count
    if suffix == ".jsonl":
        assert len(frame) == sum(1 for line in bytes(blob).decode("utf-8").splitlines() if line.strip())
    else:
        assert len(frame) == 6
    os.remove(path)


# ---------------------------------------------------------------- configs through the schemas

PARAMS = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text(encoding="utf-8"))


@st.composite
def composed_configs(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """params.yaml with up to three keys dropped, retyped, pushed out of range or misspelt."""
    params = copy.deepcopy(PARAMS)
    touched = []
    for _ in range(draw(st.integers(1, 3))):
        node, path = params, []
        while isinstance(node, dict) and node and draw(st.booleans() if path else st.just(True)):
            key = draw(st.sampled_from(sorted(node, key=str)))
            path.append(str(key))
            if not isinstance(node[key], dict):
                break
            node = node[key]
        if not path:
            continue
        parent = params
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["drop", "retype", "range", "typo"]))
        last = path[-1]
        if action == "drop":
            parent.pop(last, None)
        elif action == "retype":
            parent[last] = draw(json_values)
        elif action == "range":
            parent[last] = draw(st.sampled_from([-1, 0, 1.5, 10**9, "", [], "abc", True, None]))
        else:
            # a copy: an alias would let a later mutation of the misspelt key change the real one too
            parent[last + "x"] = copy.deepcopy(parent.get(last))
        touched.append(".".join([*path[:-1], last + ("x" if action == "typo" else "")]))
    return params, touched


@FUZZ
@given(case=composed_configs())
def test_composed_configs_give_a_typed_config_or_one_line_naming_the_key(case: tuple[dict, list]) -> None:
    params, touched = case
    try:
        config = validate(params, file="params.yaml")
    except ConfigError as exc:
        text = str(exc)
        assert text.startswith("params.yaml: ") and "\n" not in text
        # the error names a key that was touched, or one inside or above it
        assert any(exc.key.startswith(t.split(".")[0]) for t in touched), (exc.key, touched)
        return
    assert isinstance(config, Config)
    assert config.probe is None or config.probe.sample is None or config.probe.sample >= 1
    k = None if config.gate is None else config.gate.k
    assert k is None or (isinstance(k, int) and k >= 1)


@FUZZ
@given(cfg=model_configs())
def test_model_configs_the_schema_accepts_build_a_backend(cfg: Any) -> None:
    """The schema is the one check: what it accepts, the backend builds (bedrock needs AWS, left out)."""
    try:
        typed = validate_group("model", cfg, file="model.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("model.yaml: model") and "\n" not in str(exc)
        return
    if cfg["backend"] == "bedrock":
        return
    backend = make_backend(typed)
    assert isinstance(backend.name, str) and callable(backend.complete)


@FUZZ
@given(cfg=presentation_configs())
def test_presentation_configs_the_schema_accepts_give_prompts_or_a_named_error(cfg: dict[str, Any]) -> None:
    try:
        typed = {group: validate_group(group, cfg[group]) for group in ("prompt", "labels", "reasoning")}
    except ConfigError as exc:
        assert exc.key.split(".")[0] in ("prompt", "labels", "reasoning")
        return
    try:
        presentations = build_presentations(ITEMS, **{**cfg, **typed})
    except BlindMCQError:
        return  # e.g. a template with an unknown {field}: named by the presentation code
    assert presentations and all(isinstance(p.user, str) and p.user for p in presentations)


def test_make_test_runs_the_fuzz_tests_derandomized() -> None:
    """The fuzz tests run derandomized in `make test`, not only under CI."""
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "BLINDMCQ_DERANDOMIZE=1" in recipe
    conftest = (Path(__file__).resolve().parent / "conftest.py").read_text(encoding="utf-8")
    assert 'os.environ.get("BLINDMCQ_DERANDOMIZE")' in conftest
