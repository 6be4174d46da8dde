"""The README's model-free lines (``$M``: "no model download") load no model: every model any stage of
those experiments builds (probed, gate, panel, rewrite's probes, AnswerPool) is a heuristic or lexical
search, and building them builds no local, Bedrock or OpenAI-style backend."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from blindmcq.backends import registry
from blindmcq.config.files import load_models
from blindmcq.config.schema import ModelSchema, model_config

REPO = Path(__file__).resolve().parents[1]
MODEL_BACKENDS = {"local", "bedrock", "openai"}  # a download or a paid call


def readme_lines() -> tuple[list[str], list[list[str]]]:
    """``$M``'s overrides and each ``dvc exp run $M ...`` line's own, as Hydra overrides."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    (m,) = re.findall(r'^M="([^"]+)"', text, flags=re.M)
    lines = [ln.split("#", 1)[0] for ln in text.splitlines() if ln.startswith("dvc exp run $M ")]
    return overrides(m), [overrides(ln.removeprefix("dvc exp run $M ")) for ln in lines]


def overrides(text: str) -> list[str]:
    words = shlex.split(text)
    return [words[i + 1] for i, w in enumerate(words) if w == "-S"]


def models_built(params: dict[str, Any]) -> set[str]:
    """The model config names the stages build from ``params``: probe (model, panel), gate (gate_model),
    rewrite (the model rewriter's model; the panel or model probed before and after), answerpool (model)."""
    names = {params["model"]["name"], params["gate_model"]["name"], *(params["panel"].get("models") or [])}
    rewrite = params["intervention"]["rewrite"]
    if rewrite.get("rewriter") == "model":
        names.add(rewrite.get("model") or params["model"]["name"])
    return {str(n) for n in names}


def test_the_model_free_lines_name_only_heuristic_and_lexical_models() -> None:
    m, lines = readme_lines()
    assert "panel=surface" in m and len(lines) >= 4
    checked = 0
    for line in lines:
        if "intervention.rewrite.rewriter=model" in line:  # "LLM rewriting": names its model on purpose
            continue
        with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
            params = OmegaConf.to_container(
                compose(config_name="config", overrides=[*m, *line]), resolve=True
            )
        assert isinstance(params, dict)
        for name, cfg in load_models(models_built(params)).items():
            kind = registry.entry_for(model_config(cfg)).name
            assert kind not in MODEL_BACKENDS, f"README line `$M {' '.join(line)}` builds {name} ({kind})"
        checked += 1
    assert checked >= 4


def test_building_the_model_free_models_builds_no_model_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    make = registry.Entry.make

    def recording(self: registry.Entry, model_cfg: ModelSchema) -> Any:
        built.append(self.name)
        if self.name in MODEL_BACKENDS:
            raise AssertionError(f"a {self.name} backend was built for {model_cfg.name}")
        return make(self, model_cfg)

    monkeypatch.setattr(registry.Entry, "make", recording)
    m, _ = readme_lines()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        params = OmegaConf.to_container(compose(config_name="config", overrides=m), resolve=True)
    assert isinstance(params, dict)
    for cfg in map(model_config, load_models(models_built(params)).values()):
        if registry.entry_for(cfg).name == "lexical":
            continue  # built over results/statutes (a pipeline output), checked by kind above
        registry.make_backend(cfg)
    assert built and set(built) <= {"heuristic"}
