"""The panel config: which model configs the probe stage adds, and what the report is told about them."""

from __future__ import annotations

import pytest

from blindmcq.config.files import load_model_file, load_models
from blindmcq.config.schema import ModelSchema, model_config, validate, validate_group
from blindmcq.errors import ConfigError
from blindmcq.wiring.probe import describe_model, panel_configs, panel_manifest, panel_members


def params(models: list[str], model: str = "gemma3-270m", gate: str = "lexical", **gate_over: object) -> dict:
    return {
        "model": load_model_file(model),
        "gate_model": {**load_model_file(gate), **gate_over},
        "panel": {"name": "test", "models": models},
    }


def configs_of(p: dict) -> list[ModelSchema]:
    """What the probe stage does: read the members' configs, hand them to the panel."""
    return panel_configs(p, load_models(panel_members(p)))


def test_the_entry_point_reads_only_the_members_not_composed_in_params() -> None:
    p = params(["longest", "gemma3-270m", "lexical", "longest"])
    assert panel_members(p) == ["longest"]  # the probed model and the gate member come from params
    with pytest.raises(ConfigError, match=r"panel\.models.*'longest'"):
        panel_configs(params(["longest"]), {})  # a member whose config was not handed in


def test_members_are_model_configs_and_the_gate_member_is_the_composed_gate_model() -> None:
    configs = configs_of(params(["longest", "lexical"], seed=7))
    assert [c.name for c in configs] == ["longest", "lexical"]
    assert configs[0] == validate_group("model", load_model_file("longest"))
    assert configs[1].seed == 7  # -S gate_model.seed=7 reaches the panel member that builds the gate


def test_the_probed_model_is_probed_once_and_a_repeat_is_an_error() -> None:
    assert [c.name for c in configs_of(params(["longest", "most-words"], model="longest"))] == ["most-words"]
    with pytest.raises(ConfigError, match=r"panel\.models.*twice"):
        configs_of(params(["longest", "longest"]))
    with pytest.raises(ConfigError, match="model"):
        configs_of(params(["no-such-model"]))


def test_the_schema_rejects_a_path_where_a_name_belongs() -> None:
    validate_group("panel", {"name": "x", "models": ["longest"]})
    with pytest.raises(ConfigError, match=r"panel\.models\[0\]"):
        validate_group("panel", {"name": "x", "models": ["conf/model/longest.yaml"]})


def test_the_manifest_names_the_scoring_variants_of_the_probed_weights() -> None:
    p = params(["gemma3-270m-cloze", "gemma3-270m-cloze-raw", "longest", "lexical"])
    manifest = panel_manifest(p, load_models(panel_members(p)))
    assert manifest["model"] == "gemma3-270m"
    assert manifest["scoring_variants"] == ["gemma3-270m-cloze", "gemma3-270m-cloze-raw"]
    assert manifest["models"]["gemma3-270m"] == "letter scoring"
    assert manifest["models"]["gemma3-270m-cloze"] == "cloze, per character"
    assert manifest["models"]["gemma3-270m-cloze-raw"] == "cloze, raw"
    assert describe_model(load_model_file("longest")) == "option-only: longest"


def test_the_cloze_configs_inherit_gemma_as_hydra_composes_them() -> None:
    base = load_model_file("gemma3-270m")
    token = load_model_file("gemma3-270m-cloze-token")
    assert token == {**base, "name": "gemma3-270m-cloze-token", "scoring": "cloze", "cloze_norm": "token"}


def test_probe_panel_probes_the_items_it_is_given(tmp_path, repo_root) -> None:
    """The entry point hands the sample in: the panel reads no items file itself."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from blindmcq.config.files import load_label_schemes
    from blindmcq.datasets.items import Item
    from blindmcq.tasks.probe import PresentationSetup, probe_panel
    from blindmcq.wiring.probe import engine_settings

    overrides = ["model=constant-a", "model@gate_model=constant-b", "panel.models=[constant-a,constant-c]",
                 f"probe.cache={tmp_path / 'cache.sqlite'}", "condition=blind"]  # fmt: skip
    with initialize_config_dir(config_dir=str(repo_root / "conf"), version_base=None):
        p = OmegaConf.to_container(compose(config_name="config", overrides=overrides), resolve=True)
    items = [Item(id=f"t-b-{n}", source="t", bank="b", number=str(n), question=f"Q{n}?",
                  options=["один", "два", "три", "чотири"], key=n % 4) for n in (1, 2)]  # fmt: skip
    models = [model_config(p["model"]), *panel_configs(p, load_models(panel_members(p)))]
    frame = probe_panel(
        items,
        models,
        PresentationSetup.from_params(validate(p, file=None), load_label_schemes()),
        engine_settings(p),
    )
    assert set(frame["item_id"]) == {"t-b-1", "t-b-2"}
    assert set(frame["model"]) == {"constant-a", "constant-c"}
