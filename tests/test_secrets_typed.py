"""A ``${secret:NAME}`` reference in ``params.yaml`` reaches the typed config resolved (the value is read
where the calls are made) and never its repr: a typed group logged or put in an error shows ``***``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from blindmcq.errors import ConfigError
from blindmcq.params import load_params

ROOT = Path(__file__).resolve().parents[1]
VALUE = "typed-config-secret-0042"


def _params_with_secret(tmp_path: Path) -> Path:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["prompt"]["system"] = "secret-env://BLINDMCQ_TYPED_PAT"  # what ${secret:...} leaves
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    return path


def test_a_secret_reference_is_resolved_in_the_typed_config_and_masked_in_its_repr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BLINDMCQ_TYPED_PAT", VALUE)
    config = load_params(_params_with_secret(tmp_path))
    assert config.prompt is not None and config.prompt.system == VALUE  # the calls get the value
    for shown in (repr(config), repr(config.prompt), str(config.prompt), f"{config!r}"):
        assert VALUE not in shown and "***" in shown
    assert "gemma3-270m" in repr(config)  # the rest is shown as it is


def test_an_unset_secret_is_one_line_naming_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDMCQ_TYPED_PAT", raising=False)
    with pytest.raises(ConfigError, match=r"prompt\.system.*BLINDMCQ_TYPED_PAT is not set"):
        load_params(_params_with_secret(tmp_path))


def test_a_resolved_secret_in_the_wrong_type_is_named_by_its_key_and_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The references are resolved before the one schema check: its error names the key as written and
    quotes the value masked."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["probe"]["sample"] = "secret-env://BLINDMCQ_TYPED_PAT"
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("BLINDMCQ_TYPED_PAT", VALUE)
    with pytest.raises(ConfigError, match=r"params\.yaml: probe\.sample: expected .*'\*\*\*'") as info:
        load_params(path)
    assert VALUE not in str(info.value)
