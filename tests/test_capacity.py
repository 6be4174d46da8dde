"""Capacity plan: the arithmetic checked by hand on a tiny config, and the paper-scale totals."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from blindmcq.cli.plan import main
from blindmcq.config.files import load_groups, load_model_file
from blindmcq.config.schema import PlanConfig, typed
from blindmcq.datasets.items import Item, read_items, write_items
from blindmcq.datasets.nonsense import generate_nonsenseqa
from blindmcq.errors import ConfigError
from blindmcq.tasks.capacity import (
    BATCH_PRICE_FACTOR,
    PLAN_GROUPS,
    build_plan,
    mean_prompt_chars,
    measure_throughput,
    paper_config,
)

CONF = Path(__file__).resolve().parents[1] / "conf"
CONFIGS = load_groups(PLAN_GROUPS)  # what `blindmcq plan` reads


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "sample.jsonl"
    # synthetic items (NonsenseQA): the arithmetic needs real rendered prompts, not the real bank
    write_items(path, generate_nonsenseqa(0, n_test=5, n_fewshot=0).test)
    return path


def tiny(sample_file: Path, **extra: Any) -> dict[str, Any]:
    return {
        "items": 10,
        "n_options": 4,
        "models": ["sonnet-4.6", "constant-a"],
        "sample_file": str(sample_file),
        "chars_per_token": 4.0,
        "output_tokens": {"direct": 5, "step_by_step": 600},
        "quota": {"rpm": 10, "tpm": 1e9, "latency_s": 1.0},
        "runs": [
            {"name": "A", "conditions": ["blind", "full"], "orders": {"blind": "all", "full": "published"},
             "forced": True},
            {"name": "B", "items": 3, "models": ["sonnet-4.6"], "phrasings": ["original", "minimal"],
             "labels": ["latin", "cyrillic"], "reasoning": ["direct", "step_by_step"], "orders": "published"},
        ],
        **extra,
    }  # fmt: skip


def test_tiny_plan_by_hand(sample_file: Path) -> None:
    plan = build_plan(typed(PlanConfig, tiny(sample_file)), configs=CONFIGS)
    # A: per item 8 blind orders + 4 forced slots + 1 full = 13; x 10 items x 2 models
    # B: 3 items x 1 order x (2 phrasings x 2 labels x 2 reasoning) x 1 model
    assert [r["calls"] for r in plan.runs] == [13 * 10 * 2, 3 * 8]
    assert plan.totals["calls"] == 284

    sample = read_items(sample_file)

    def chars(condition: str, phrasing: str = "original", labels: str = "latin", reasoning: str = "direct"):
        return mean_prompt_chars(
            sample, condition=condition, phrasing=phrasing, labels=labels, reasoning=reasoning,
            configs=CONFIGS,
        )  # fmt: skip

    a_in_per_model = 10 * (12 * chars("blind") + chars("full")) / 4.0
    b_in = sum(
        3 * chars("blind", p, lab, r) / 4.0
        for p in ("original", "minimal")
        for lab in ("latin", "cyrillic")
        for r in ("direct", "step_by_step")
    )
    sonnet = next(m for m in plan.models if m["model"] == "sonnet-4.6")
    constant = next(m for m in plan.models if m["model"] == "constant-a")
    assert sonnet["calls"] == 130 + 24 and constant["calls"] == 130
    assert sonnet["input_tokens"] == pytest.approx(a_in_per_model + b_in)
    assert sonnet["output_tokens"] == pytest.approx(130 * 5 + 12 * 5 + 12 * 600)
    prices = load_model_file("sonnet-4.6")
    expected_cost = (
        sonnet["input_tokens"] * prices["price_per_1k_input"]
        + sonnet["output_tokens"] * prices["price_per_1k_output"]
    ) / 1000
    assert sonnet["cost_usd"] == pytest.approx(expected_cost)
    assert not constant["priced"] and constant["cost_usd"] == 0
    # 10 rpm x 4 regions binds before 8 in flight x 60 / 1 s
    assert sonnet["limit"] == "rpm" and sonnet["calls_per_min"] == 40
    assert sonnet["wall_hours"] == pytest.approx(154 / 40 / 60)
    assert plan.totals["wall_hours_parallel"] == pytest.approx(max(m["wall_hours"] for m in plan.models))
    # a blind prompt of this bank is a few hundred characters, a full one longer
    assert 150 < chars("blind") < chars("full") < 3000


def test_items_file_counts_each_items_own_options(sample_file: Path, tmp_path: Path) -> None:
    base = read_items(sample_file)[0]
    items = [
        Item(**{**base.__dict__, "id": "x-1", "options": base.options[:3], "key": 0}),
        Item(**{**base.__dict__, "id": "x-2", "options": (*base.options, "п'ятий"), "key": 1}),
        Item(**{**base.__dict__, "id": "x-3", "status": "excluded"}),  # not usable: not counted
    ]
    write_items(tmp_path / "items.jsonl", items)
    cfg = tiny(sample_file, items_file=str(tmp_path / "items.jsonl"))
    del cfg["items"]
    cfg["runs"] = [{"name": "blind", "orders": "all", "forced": True, "models": ["constant-a"]}]
    plan = build_plan(typed(PlanConfig, cfg), configs=CONFIGS)
    assert plan.totals["calls"] == (6 + 3) + (10 + 5)


@pytest.mark.full  # plans the paper's whole grid
def test_paper_plan_is_about_1_2_million_calls(capsys: pytest.CaptureFixture[str]) -> None:
    plan = build_plan(typed(PlanConfig, paper_config()), configs=CONFIGS)
    assert plan.runs[0]["calls"] == 11_990 * 8 * 12
    assert 1_150_000 < plan.totals["calls"] < 1_300_000
    assert plan.totals["cost_usd"] > 0 and plan.totals["wall_hours_parallel"] > 1
    assert main(["--paper", "--rpm", "100"]) == 0
    out = capsys.readouterr().out
    assert f"total calls {plan.totals['calls']:,}" in out and "no model was called" in out
    # whose bank the 11,990 items are, and whose items the prompt lengths come from
    assert out.splitlines()[0].startswith("items: 11,990 four-option items, the paper's bank")
    assert f"prompt lengths from {plan.totals['sample_items']} items of " in out
    # each model's calls a minute beside the limit that sets them, not run together with it
    header = next(line for line in out.splitlines() if line.startswith("model "))
    assert "calls/min (bound by)" in header and " limit " not in header
    sonnet = next(line for line in out.splitlines() if line.startswith("sonnet-4.6 "))
    assert re.search(r" [\d,]+ \((rpm|tpm|concurrency)\) ", sonnet), sonnet


def test_cli_json_and_config_file(
    sample_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(tiny(sample_file)), encoding="utf-8")
    assert main(["--config", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["calls"] == 284


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"items": 0}, "items"),
        ({"bogus": 1}, "bogus"),
        ({"runs": []}, "runs"),
        ({"runs": [{"conditions": ["sideways"]}]}, r"runs\[0\].conditions"),
        ({"runs": [{"orders": "some"}]}, r"runs\[0\].orders.blind"),
        ({"runs": [{"reasoning": ["pondering"]}]}, "reasoning"),
        ({"quota": {"rpm": -1}}, "quota.rpm"),
        ({"models": ["no-such-model"]}, "model"),
    ],
)
def test_bad_plan_configs_name_the_key(sample_file: Path, change: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        build_plan(typed(PlanConfig, {**tiny(sample_file), **change}), configs=CONFIGS)


def test_cli_reports_errors_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text("- a list\n", encoding="utf-8")
    assert main(["--config", str(tmp_path / "bad.yaml")]) == 2
    assert "not a mapping" in capsys.readouterr().err


def test_three_routes(sample_file: Path) -> None:
    plan = build_plan(typed(PlanConfig, {**tiny(sample_file), "throughput": 2.0}), configs=CONFIGS)
    routes = {r["route"]: r for r in plan.routes}
    assert list(routes) == ["on-demand", "batch", "server"]
    assert routes["on-demand"]["cost_usd"] == pytest.approx(plan.totals["cost_usd"])
    assert routes["on-demand"]["wall_hours"] == pytest.approx(plan.totals["wall_hours_parallel"])
    sonnet = next(m for m in plan.models if m["model"] == "sonnet-4.6")
    # sonnet (Anthropic: listed for batch) at half price; the heuristic constant-a is not batchable
    assert routes["batch"]["calls"] == sonnet["calls"] and routes["batch"]["jobs"] == 1
    assert routes["batch"]["cost_usd"] == pytest.approx(BATCH_PRICE_FACTOR * sonnet["cost_usd"])
    assert routes["batch"]["not_batchable"] == ["constant-a"]
    assert routes["server"]["wall_hours"] == pytest.approx(284 / 2.0 / 3600)
    no_throughput = build_plan(typed(PlanConfig, tiny(sample_file)), configs=CONFIGS)
    assert no_throughput.routes[2]["wall_hours"] is None  # no throughput, no guess
    with pytest.raises(ConfigError, match="throughput"):
        build_plan(typed(PlanConfig, {**tiny(sample_file), "throughput": 0}), configs=CONFIGS)


def test_unverified_configs_are_listed(sample_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = build_plan(typed(PlanConfig, tiny(sample_file)), configs=CONFIGS)
    fields = load_model_file("sonnet-4.6")["unverified"]
    # constant-a is no Bedrock model
    assert plan.unverified == [{"model": "sonnet-4.6", "unverified": fields}]
    path = sample_file.parent / "plan.yaml"
    path.write_text(yaml.safe_dump(tiny(sample_file)), encoding="utf-8")
    assert main(["--config", str(path), "--throughput", "4"]) == 0
    out = capsys.readouterr().out
    assert "not verified against AWS documentation" in out and "sonnet-4.6" in out.split("not verified")[1]
    assert "(4 calls/s)" in out


def test_every_paper_bedrock_config_names_its_source() -> None:
    for name in [*paper_config()["models"], "deepseek-r1"]:
        cfg = load_model_file(name)
        text = (CONF / "model" / f"{name}.yaml").read_text(encoding="utf-8")
        assert cfg["backend"] == "bedrock" and cfg["api"] in ("converse", "responses")
        assert "docs.aws.amazon.com" in text, name  # the page (title and address) in a comment
        assert cfg["verified"] is True or cfg["unverified"], name


def test_measured_throughput_is_bounded_by_concurrency_over_latency(
    sample_file: Path, tmp_path: Path
) -> None:
    conf = tmp_path / "conf"
    (conf / "model").mkdir(parents=True)
    for group in ("prompt", "labels", "reasoning"):
        (conf / group).symlink_to(CONF / group, target_is_directory=True)
    (conf / "model" / "slow.yaml").write_text("backend: slow\nlatency_s: 0.05\nconcurrency: 2\n")
    (conf / "config.yaml").symlink_to(CONF / "config.yaml")  # its defaults name the presentation
    rate = measure_throughput("slow", 6, configs=load_groups(PLAN_GROUPS, conf), sample_file=str(sample_file))
    assert 0 < rate <= 2 / 0.05  # each call sleeps 0.05 s, two at a time: never faster
