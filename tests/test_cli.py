"""The ``blindmcq`` command line: every subcommand resolves, bad input exits 2 with the file named."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from blindmcq.cli import COMMANDS, main


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_has_a_main(command: str) -> None:
    module = importlib.import_module(COMMANDS[command][0])
    assert callable(module.main)


def test_unknown_command_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_html_without_pipeline_outputs_names_the_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["html"]) == 2
    assert "results/corpus/items.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()
