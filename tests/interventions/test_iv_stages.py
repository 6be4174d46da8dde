"""Both stages end to end on real customs items with a heuristic model, in a scratch project folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from blindmcq.answers.predictions import read_predictions
from blindmcq.config.files import intervention_group, read_group
from blindmcq.config.schema import validate, validate_group
from blindmcq.datasets.items import read_items, write_items
from blindmcq.datasets.registry import load_dataset
from blindmcq.stages.answerpool import answerpool_stage
from blindmcq.stages.rewrite import rewrite_stage


@pytest.fixture
def project(samples: Path, repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    path = samples / "ua-customs-exam" / "questions.json"
    items = load_dataset(
        validate_group("dataset", {"loader": "customs", "path": str(path), "parts": ["legislation"]})
    )
    write_items(tmp_path / "results" / "corpus" / "items.jsonl", items)
    monkeypatch.chdir(tmp_path)
    conf = lambda group, name: yaml.safe_load((repo_root / "conf" / group / f"{name}.yaml").read_text())  # noqa: E731
    return {
        "model": {"name": "longest", "backend": "heuristic", "strategy": "longest"},
        "prompt": conf("prompt", "original"), "labels": conf("labels", "latin"),
        "reasoning": conf("reasoning", "direct"), "protocol": conf("protocol", "sl"),
        "probe": {"sample": 12, "seed": 0, "cache": str(tmp_path / "cache.sqlite")},
        "tracking": {"enabled": False},
    }  # fmt: skip


def test_defaults_come_from_conf_when_params_have_none(project: dict) -> None:
    bare = validate(project, file=None)
    assert intervention_group(bare, "rewrite").rewriter == "length_match"
    assert intervention_group(bare, "answerpool").group_size == 5
    own = validate({**project, "intervention": {"rewrite": {"rewriter": "model"}}}, file=None)
    assert intervention_group(own, "rewrite").rewriter == "model"
    assert intervention_group(own, "answerpool").group_size == 5  # the one left out: the shipped file


def test_rewrite_stage(project: dict) -> None:
    metrics = rewrite_stage(validate(project, file=None))
    out = Path("results/interventions/rewrite")
    rewritten = read_items(out / "items.jsonl")
    source = {i.id: i for i in read_items("results/corpus/items.jsonl")}
    assert len(rewritten) == 12
    assert all(i.options[i.key] == source[i.id].options[source[i.id].key] for i in rewritten)
    assert all(i.meta["rewrite"]["original_options"] == list(source[i.id].options) for i in rewritten)
    before, after = (
        read_predictions(out / "predictions_before.parquet"),
        read_predictions(out / "predictions_after.parquet"),
    )
    # the default rewrite probes the N rotations: each option in each slot once
    assert len(before) == len(after) == 12 * 4 and set(before["condition"]) == {"blind"}
    assert set(after["order_id"]) == {"rot0", "rot1", "rot2", "rot3"}
    assert metrics["blind_before_acc"] == pytest.approx(before["correct"].mean())
    assert metrics["blind_after_acc"] == pytest.approx(after["correct"].mean())
    assert json.loads((out / "metrics.json").read_text()) == pytest.approx(metrics)
    assert "| blind | after | 12 | 48 |" in (out / "comparison.md").read_text()  # items, then calls
    assert (out / "diff.md").exists() and (out / "diff.csv").exists()


def test_rewrite_stage_probes_the_panel(project: dict) -> None:
    """With a panel, its members are probed before and after (not the model); their metric names
    carry the member's name."""
    project["panel"] = {"name": "p", "models": ["most-words", "shortest"]}
    metrics = rewrite_stage(validate(project, file=None))
    after = read_predictions(Path("results/interventions/rewrite/predictions_after.parquet"))
    assert set(after["model"]) == {"most-words", "shortest"} and len(after) == 2 * 12 * 4
    for name in ("most-words", "shortest"):
        mine = after[after["model"] == name]
        assert metrics[f"{name}/blind_after_acc"] == pytest.approx(mine["correct"].mean())
    assert "blind_after_acc" not in metrics  # the probed model (longest) is not a panel member here


def test_answerpool_stage(project: dict) -> None:
    cfg = {**read_group("intervention", "answerpool"), "sample": None}  # null: the probe's own 12 items
    metrics = answerpool_stage(validate({**project, "intervention": {"answerpool": cfg}}, file=None))
    out = Path("results/interventions/answerpool")
    import pandas as pd

    pooled = pd.read_parquet(out / "predictions.parquet")
    ordinary = read_predictions(out / "ordinary.parquet")
    assert len(pooled) == 24 and set(pooled["condition"]) == {"blind", "full"}
    assert len(ordinary) == 24 and set(ordinary["order_id"]) == {"rot0"}
    answerable = pooled[(pooled["condition"] == "full") & pooled["answerable"]]
    assert metrics["full_pooled_acc"] == pytest.approx(answerable["correct"].mean())
    same = ordinary[(ordinary["condition"] == "full") & ordinary["item_id"].isin(answerable["item_id"])]
    assert metrics["full_elimination_credit"] == pytest.approx(
        same["correct"].mean() - answerable["correct"].mean()
    )
    assert "elimination credit" in (out / "comparison.md").read_text()


def test_rewrite_stage_names_its_fluency_scorer(project: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel's first member that scores option texts measures fluency, and the comparison's note names
    it: the members come typed (a schema, not a mapping) from the panel's config."""
    import blindmcq.stages.rewrite as stage
    from blindmcq.backends.base import Abilities

    project["panel"] = {"name": "p", "models": ["most-words", "shortest"]}
    real = stage.abilities_of
    monkeypatch.setattr(
        stage, "abilities_of", lambda m: Abilities(score_options=True) if m.name == "shortest" else real(m)
    )
    scored: list[str] = []

    def fluency(backend, items, rewritten, cue):
        scored.append(type(backend).__name__)
        return {"fluency_n": 3, "fluency_before": -2.0, "fluency_after": -2.5, "fluency_items": 2,
                "fluency_up": 1, "fluency_down": 1, "fluency_sign_p": 1.0, "fluency_keys": -1.5}  # fmt: skip

    monkeypatch.setattr(stage, "fluency_change", fluency)
    metrics = rewrite_stage(validate(project, file=None))
    assert scored and metrics["fluency_keys"] == -1.5
    assert "Fluency (shortest," in Path("results/interventions/rewrite/comparison.md").read_text()
