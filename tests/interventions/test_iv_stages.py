"""Both stages end to end on real customs items with a heuristic model, in a scratch project folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from blindmcq.answers.predictions import read_predictions
from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
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
    # no probed model scores option texts: no fluency figures, and the stage's output is an empty file
    assert (out / "fluency.jsonl").read_text() == "" and not any(k.startswith("fluency") for k in metrics)


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


class _Scorer:
    """A stand-in cloze scorer: a text's per-token score from its length; counts the calls it answers."""

    name = "stand-in-cloze"
    abilities = Abilities(score_options=True)

    def __init__(self) -> None:
        self.calls: list[str] = []

    def wire_request(self, request: ModelRequest) -> dict:
        keys = ("option_texts", "cloze_question", "answer_cue", "cloze_batch_size")
        return {"model": request.model, **{k: request.extra.get(k) for k in keys}}

    def complete(self, request: ModelRequest) -> ModelResponse:
        (text,) = request.extra["option_texts"]
        assert request.extra["cloze_question"] is None and request.extra["cloze_batch_size"] == 1
        self.calls.append(text)
        score = round(-1.0 - 10.0 / (1 + len(text)), 4)
        return ModelResponse(
            text="1", choice_logprobs=[score], meta={"per_token": [score], "n_tokens": [len(text)]}
        )


def test_rewrite_stage_scores_fluency_through_the_cache_and_reads_its_figures_from_the_file(
    project: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The panel's first member that scores option texts measures fluency, and the comparison's note names
    it (the members come typed from the panel's config). Its scores go through the engine and the
    response cache into ``fluency.jsonl``, the figures come from that file, and a second run of the stage
    makes no new scoring call and writes the same file and figures."""
    import blindmcq.stages.rewrite as stage
    import blindmcq.tasks.rewrite as task
    from blindmcq.analysis.interventions import fluency_change, read_fluency

    project["panel"] = {"name": "p", "models": ["most-words", "shortest"]}
    real = stage.abilities_of
    monkeypatch.setattr(
        stage, "abilities_of", lambda m: Abilities(score_options=True) if m.name == "shortest" else real(m)
    )
    built: list[_Scorer] = []

    def make_backend(cfg: object) -> _Scorer:
        assert getattr(cfg, "name", None) == "shortest"
        built.append(_Scorer())
        return built[-1]

    monkeypatch.setattr(task, "make_backend", make_backend)
    out = Path("results/interventions/rewrite")
    runs = []
    for _ in range(2):
        metrics = rewrite_stage(validate(project, file=None))
        runs.append((metrics, (out / "fluency.jsonl").read_bytes()))
    (first, written), (second, again) = runs
    scores = read_fluency(out / "fluency.jsonl")
    assert len(built) == 2 and built[0].calls and built[1].calls == []  # the second run: all from the cache
    assert len(built[0].calls) == scores["text"].nunique() and set(scores["model"]) == {"shortest"}
    figures = fluency_change(scores)
    assert figures["fluency_n"] == first["distractors_changed"] > 0
    assert {k: first[k] for k in figures} == figures and first == second and again == written
    assert "Fluency (shortest," in (out / "comparison.md").read_text()
