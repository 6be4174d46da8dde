"""Typed configs: every shipped config passes its schema; unknown keys, wrong types and
out-of-range values stop with one line naming the file and the key, exit 2, at the stage entry point."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from blindmcq.config.files import default_choices, load_group, read_group
from blindmcq.config.schema import (
    BedrockModel,
    Config,
    HeuristicModel,
    OpenAIModel,
    validate,
    validate_group,
)
from blindmcq.errors import ConfigError
from blindmcq.params import load_params

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "conf").glob("*/*.yaml"))


def _params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_typed_configs_accept_every_shipped_file(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if path.parent.name == "model" and "defaults" in data:  # a model config inheriting another (Hydra)
        from blindmcq.config.files import load_model_file

        data = load_model_file(path)
    typed = validate_group(path.parent.name, data, file=str(path))
    assert typed.name == data["name"]


def test_typed_configs_params_yaml_becomes_a_typed_config() -> None:
    config = validate(_params())
    assert isinstance(config, Config)
    assert config.probe is not None and config.probe.sample == _params()["probe"]["sample"]
    assert config.gate is not None and config.gate.k is None and config.gate.false_rejection == 0.05
    assert config.intervention is not None and config.intervention.answerpool is not None


def test_typed_configs_models_get_one_schema_per_backend() -> None:
    assert isinstance(load_group("model", "gpt-5.6"), BedrockModel)
    assert isinstance(load_group("model", "longest"), HeuristicModel)
    openai = {"name": "gpt", "backend": "openai", "model_id": "gpt-5", "api": "responses", "logprobs": True,
              "base_url": "https://example.invalid/v1", "api_key_env": "OPENAI_API_KEY"}  # fmt: skip
    assert isinstance(validate_group("model", openai), OpenAIModel)
    with pytest.raises(ConfigError, match=r"model\.api'?: expected one of 'chat', 'responses', got 'rest'"):
        validate_group("model", {**openai, "api": "rest"})
    # a key of another backend is unknown here
    with pytest.raises(ConfigError, match=r"model\.model_id'?: unknown key; expected one of"):
        validate_group("model", {"name": "x", "backend": "heuristic", "strategy": "longest", "model_id": "m"})
    with pytest.raises(ConfigError, match=r"model\.backend'?: expected one of bedrock, fault"):
        validate_group("model", {"name": "x", "backend": "gpu"})
    with pytest.raises(ConfigError, match=r"model\.inner\.strategy"):
        inner = {"backend": "heuristic", "strategy": "?"}
        validate_group("model", {"name": "f", "backend": "fault", "inner": inner})
    with pytest.raises(ConfigError, match=r"model\.aws_secret_access_key'?: credentials do not belong"):
        validate_group("model", {**read_group("model", "gpt-5.6"), "aws_secret_access_key": "x"})


BAD = [  # (dotted key, value, the start of the one-line error after "params.yaml: ")
    ("probe.smaple", 5, "probe.smaple: unknown key; expected one of cache, "),
    ("probe.sample", "abc", "probe.sample: expected an integer or null, got 'abc'"),
    ("probe.sample", 2.5, "probe.sample: expected an integer or null, got 2.5"),
    ("probe.sample", 0, "probe.sample: must be >= 1, got 0"),
    ("gate.k", "abc", "gate.k: expected an integer or null, got 'abc'"),
    ("gate.k", True, "gate.k: expected an integer or null, got True"),
    ("model.temprature", 0, "model.temprature: unknown key"),
    ("condition.conditions", ["blnd"], "condition.conditions[0]: expected one of 'blind', 'full'"),
    ("intervention.answerpool.delete_share", 1.5, "intervention.answerpool.delete_share: must be <= 1"),
    ("sede", 1, "sede: unknown key"),
    ("reasoning.max_tokens", -1, "reasoning.max_tokens: must be >= 1"),
    ("dataset.workers", 0, "dataset.workers: must be >= 1, got 0"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD, ids=[f"{k}={v!r}" for k, v, _ in BAD])
def test_typed_configs_reject_bad_values_naming_file_and_key(key: str, value: object, message: str) -> None:
    params = copy.deepcopy(_params())
    *parents, last = key.split(".")
    node = params
    for part in parents:
        node = node[part]
    node[last] = value
    with pytest.raises(ConfigError) as info:
        validate(params, file="params.yaml")
    assert str(info.value).startswith("params.yaml: " + message), str(info.value)
    assert "\n" not in str(info.value)


def test_typed_configs_stage_entry_point_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    params = _params()
    params["probe"]["smaple"] = 5  # the typo: probed the whole bank before
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    from blindmcq.stages import probe

    with pytest.raises(SystemExit) as info:
        probe.main()
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("blindmcq probe: error: params.yaml: probe.smaple: unknown key; expected one of")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "results").exists()  # stopped before any work


def test_typed_configs_load_params_gives_typed_groups(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text((ROOT / "params.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    config = load_params(path)
    assert config.model is not None and config.model.backend == _params()["model"]["backend"]
    assert config.tracking is not None and config.tracking.enabled is True


def test_a_loaded_config_keeps_the_mapping_it_was_checked_from(tmp_path: Path) -> None:
    """``as_written``: the mapping as ``params.yaml`` holds it (what MLflow logs, what a fingerprint
    hashes), keys the schema defaults left out; a config built in code has none to give."""
    import dataclasses

    from blindmcq.config.schema import Config, as_written

    written = _params()
    del written["probe"]["concurrency"], written["tracking"]
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(written, allow_unicode=True), encoding="utf-8")
    config = load_params(path)
    assert config.probe is not None and config.probe.concurrency is None  # the schema's default
    assert as_written(config) == written and "concurrency" not in as_written(config, "probe")
    assert as_written(config, "dataset") == written["dataset"]
    assert config == load_params(path)  # the mapping is no field: equality is the typed values'
    with pytest.raises(ConfigError, match=r"tracking.*missing"):
        as_written(config, "tracking")
    with pytest.raises(TypeError):
        as_written(dataclasses.replace(config, seed=1))  # changed in code: no longer what was written
    with pytest.raises(TypeError):
        as_written(Config())


def test_groups_read_once_hand_out_frozen_options_and_name_what_is_missing() -> None:
    import dataclasses

    from blindmcq.config.files import load_groups, load_label_schemes

    groups = load_groups(["labels", "model"])
    latin = groups.option("labels", "latin")
    assert latin.symbols[:2] == ["A", "B"]
    with pytest.raises(dataclasses.FrozenInstanceError):  # typed and frozen: no reader changes the next's
        latin.symbols = ["Z"]  # type: ignore[misc]
    assert groups.option("labels", "latin").symbols[0] == "A"
    assert groups.option("model", "gemma3-270m-cloze").scoring == "cloze"  # defaults inherited
    with pytest.raises(ConfigError, match=r"'labels': no config 'greek' \(have cyrillic, dash, latin"):
        groups.option("labels", "greek")
    with pytest.raises(ConfigError, match="no prompt options were loaded"):
        groups.option("prompt", "original")
    assert sorted(load_label_schemes()) == ["cyrillic", "dash", "latin", "numerals"]


def test_a_default_is_read_from_the_schema() -> None:
    """Code that reads a plain mapping takes its fallback from the schema (one place per default)."""
    from blindmcq.config.schema import BedrockModel, Labels, OpenAIModel, default

    assert default(BedrockModel, "read_timeout_s") == default(OpenAIModel, "read_timeout_s") == 300
    assert default(Labels, "line") == "{label}) {text}" and default(Labels, "noun") == {}
    with pytest.raises(KeyError, match=r"Labels\.name has no default"):
        default(Labels, "name")


def test_a_fields_words_are_read_from_its_literal() -> None:
    """Code that checks or lists a setting's words takes them from the field's ``Literal``."""
    from blindmcq.config.schema import Analysis, CustomsDataset, GenericDataset, Labels, LocalModel, choices
    from blindmcq.vocabulary import SCORINGS

    assert choices(LocalModel, "scoring") == SCORINGS == ("letter", "cloze")
    assert choices(Analysis, "failed_calls") == ("drop", "wrong")
    assert choices(CustomsDataset, "parts") == ("legislation", "operational")  # list[Literal[...]] | None
    assert choices(GenericDataset, "key_format") == ("index", "index1", "label", "text")  # Literal | None
    with pytest.raises(KeyError, match=r"Labels\.line is not typed with a Literal"):
        choices(Labels, "line")


def test_default_choices_are_the_groups_the_composed_params_hold(tmp_path: Path) -> None:
    """conf/config.yaml's defaults list, read without Hydra: each group's option is the one params.yaml
    (what DVC composes from it) holds."""
    choices = default_choices()
    composed = _params()
    groups = ("dataset", "model", "prompt", "labels", "condition", "protocol", "reasoning", "gate", "probe")
    for group in groups:
        assert composed[group]["name"] == choices[group], group
    assert composed["gate_model"]["name"] == choices["model@gate_model"]
    (tmp_path / "config.yaml").write_text("defaults: nope\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="defaults"):
        default_choices(tmp_path)


def test_second_bank_is_a_typed_record_with_its_own_keys() -> None:
    params = _params()
    params["analysis"]["second_bank"] = {"name": "lexam", "predictions": "releases/lexam/p.parquet"}
    second = validate(params, file="params.yaml").analysis.second_bank
    assert (second.name, second.predictions, second.items) == ("lexam", "releases/lexam/p.parquet", None)
    params["analysis"]["second_bank"]["itemz"] = "x"
    with pytest.raises(ConfigError, match=r"^params.yaml: analysis\.second_bank\.itemz: unknown key; "
                                          r"expected one of items, name, predictions$"):  # fmt: skip
        validate(params, file="params.yaml")
    params["analysis"]["second_bank"] = {"predictions": 3}
    with pytest.raises(ConfigError, match=r"analysis\.second_bank\.predictions"):
        validate(params, file="params.yaml")


def test_the_default_baseline_is_the_presentation_the_default_config_composes() -> None:
    from blindmcq.analysis.frame import HEADLINE_ORDERS, Baseline, baseline_from_params

    composed = baseline_from_params(load_params(Path("params.yaml")), orders=HEADLINE_ORDERS)
    assert Baseline() == composed
    assert Baseline().phrasing == default_choices()["prompt"]
