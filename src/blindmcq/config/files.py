"""Where config files are read: ``conf/<group>/<name>.yaml``, checked against the group's schema.

The one place besides Hydra that reads ``conf/``. Entry points (the stages, the command lines) call
these loaders once and hand the core what they read: :func:`load_group` and :func:`load_label_schemes`
give a group's typed dataclass (``config.schema``), :func:`load_models` the model configs of a panel,
:func:`load_groups` the options of a command that picks them by name. :func:`read_group` is a group's file
as written, for a command that applies overrides to it before it is typed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from blindmcq.config.schema import (
    AnswerPoolIntervention,
    Config,
    Labels,
    RewriteIntervention,
    validate_group,
)
from blindmcq.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[3]  # the checkout: src/blindmcq/config/files.py
CONF_DIR = REPO_ROOT / "conf"  # the one place that knows where conf/ is


def hydra_conf_dir() -> str:
    """The folder Hydra composes the sweep's config from: ``$BLINDMCQ_CONF``, else ``./conf`` (the sweep
    and ``dvc exp run`` start in the repository root)."""
    return os.environ.get("BLINDMCQ_CONF", str(Path.cwd() / "conf"))


def hydra_conf_problem(conf_dir: str | Path | None = None) -> str | None:
    """Why Hydra cannot compose from ``conf_dir`` (default ``hydra_conf_dir()``), in one line that says
    what to do; None when its ``config.yaml`` is there."""
    conf = Path(conf_dir or hydra_conf_dir())
    if (conf / "config.yaml").is_file():
        return None
    return (
        f"no config.yaml in {conf}: run the sweep from the repository root (cd {REPO_ROOT}), or set "
        "BLINDMCQ_CONF to its conf folder"
    )


def group_names(group: str, conf_dir: str | Path | None = None) -> list[str]:
    """The option names of a config group (``conf/<group>/*.yaml`` stems), sorted."""
    return sorted(p.stem for p in (Path(conf_dir or CONF_DIR) / group).glob("*.yaml"))


def load_group(group: str, name: str, conf_dir: str | Path | None = None) -> Any:
    """``conf/{group}/{name}.yaml`` as its group's dataclass (``schema.validate_group``: ``Prompt``,
    ``Labels``, ...); errors name the file and key."""
    data, path = _read_group(group, name, conf_dir)
    return validate_group(group, data, file=str(path))


def read_group(group: str, name: str, conf_dir: str | Path | None = None) -> dict[str, Any]:
    """``conf/{group}/{name}.yaml`` as written, a plain dict (what Hydra composes as ``cfg.{group}``),
    after the schema check: what a command's ``KEY=VALUE`` overrides apply to before it is typed."""
    data, path = _read_group(group, name, conf_dir)
    validate_group(group, data, file=str(path))
    return data


def _read_group(group: str, name: str, conf_dir: str | Path | None = None) -> tuple[dict[str, Any], Path]:
    path = Path(conf_dir or CONF_DIR) / group / f"{name}.yaml"
    if not path.exists():
        raise ConfigError(group, f"no config {name!r}: {path} not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(group, f"not valid YAML: {exc}", file=str(path)) from None
    if not isinstance(data, dict):
        raise ConfigError(group, "does not hold a mapping", file=str(path))
    return data, path


def default_choices(conf_dir: str | Path | None = None) -> dict[str, str]:
    """The option each group takes in ``conf/config.yaml``'s defaults list (``{"prompt": "original",
    "model@gate_model": "lexical", ...}``, keys as written): what Hydra composes when nothing overrides."""
    path = Path(conf_dir or CONF_DIR) / "config.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError("defaults", f"not readable: {exc}", file=str(path)) from None
    entries = data.get("defaults") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError("defaults", "expected Hydra's defaults list", file=str(path))
    return {
        str(group): str(name) for entry in entries if isinstance(entry, dict) for group, name in entry.items()
    }


def load_model_file(name_or_path: str | Path, conf_dir: str | Path | None = None) -> dict[str, Any]:
    """``conf/model/<name>.yaml`` (or a YAML path) as a dict, schema-checked; ``name`` defaults to the
    file stem. ``conf_dir`` is the folder of model files (default ``conf/model``)."""
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = Path(conf_dir or CONF_DIR / "model") / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ConfigError("model", f"no model config at {path}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ConfigError("model", f"{path} is not a YAML mapping")
    data = _inherit(data, path)
    data.setdefault("name", path.stem)
    validate_group("model", data, file=str(path))
    return data


def _inherit(data: dict[str, Any], path: Path, depth: int = 0) -> dict[str, Any]:
    """Hydra's defaults list inside a model config, as Hydra composes it: each listed model config of
    the same folder first, then this file's own keys (``_self_``, last unless placed elsewhere)."""
    defaults = data.pop("defaults", None)
    if defaults is None:
        return data
    if depth > 8 or not isinstance(defaults, list):
        raise ConfigError("model.defaults", f"{path}: expected a short list of model config names")
    merged: dict[str, Any] = {}
    entries = defaults if "_self_" in defaults else [*defaults, "_self_"]
    for entry in entries:
        if entry == "_self_":
            merged |= data
            continue
        if not isinstance(entry, str):
            raise ConfigError("model.defaults", f"{path}: expected model config names, got {entry!r}")
        base_path = path.parent / f"{entry}.yaml"
        if not base_path.is_file():
            raise ConfigError("model.defaults", f"{path}: no model config {entry!r} at {base_path}")
        base = yaml.safe_load(base_path.read_text(encoding="utf-8"))
        merged |= _inherit(dict(base or {}), base_path, depth + 1)
    return merged


# ---------------------------------------------------------------- read once, handed to the core


@dataclass(frozen=True)
class Groups:
    """Config options read once at the edge, for code that picks options by name (a command's
    ``--phrasing``, a plan's ``phrasings``): ``options[group][name]`` is the option's typed dataclass
    (``config.schema``), :meth:`option` the same with an error naming the options for an unknown name;
    ``choices`` is conf/config.yaml's choice for each group (``default_choices``), what a name left out
    means (:meth:`default`)."""

    options: Mapping[str, Mapping[str, Any]]
    choices: Mapping[str, str] = field(default_factory=dict)

    def default(self, group: str) -> str:
        """The option conf/config.yaml composes for ``group``; a ConfigError when it chooses none."""
        if group not in self.choices:
            raise ConfigError(group, "conf/config.yaml's defaults list chooses no option")
        return self.choices[group]

    def option(self, group: str, name: str) -> Any:
        """Option ``name`` of ``group`` as its frozen dataclass; an unknown one is a ConfigError naming
        the options."""
        if group not in self.options:
            raise ConfigError(group, f"no {group} options were loaded (have {sorted(self.options)})")
        options = self.options[group]
        if name not in options:
            raise ConfigError(group, f"no config {name!r} (have {', '.join(sorted(options))})")
        return options[name]


def load_groups(groups: Iterable[str], conf_dir: str | Path | None = None) -> Groups:
    """Every option of each of ``groups`` (``model`` included, with its defaults inherited), typed."""
    options: dict[str, dict[str, Any]] = {}
    for group in groups:
        if group == "model":
            folder = Path(conf_dir or CONF_DIR) / "model"
            options[group] = {
                n: validate_group("model", load_model_file(n, folder), key=f"model {n}")
                for n in group_names("model", conf_dir)
            }
        else:
            options[group] = {n: load_group(group, n, conf_dir) for n in group_names(group, conf_dir)}
    # a conf folder without config.yaml (a test's) has options but no defaults list
    has_defaults = (Path(conf_dir or CONF_DIR) / "config.yaml").is_file()
    return Groups(options, default_choices(conf_dir) if has_defaults else {})


def load_label_schemes(conf_dir: str | Path | None = None) -> dict[str, Labels]:
    """Every label scheme (``conf/labels/*.yaml``) by name, typed: what parsing tells other schemes'
    labels by, and what a protocol's ``labels`` override names."""
    return {name: load_group("labels", name, conf_dir) for name in group_names("labels", conf_dir)}


def load_models(names: Iterable[str], conf_dir: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """The model configs of ``names`` (``conf/model/<name>.yaml``, or YAML paths), by their ``name``;
    ``conf_dir`` is the folder of model files (default ``conf/model``)."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        cfg = load_model_file(name, conf_dir)
        out[str(name)] = cfg
    return out


def intervention_group(config: Config, name: str) -> RewriteIntervention | AnswerPoolIntervention:
    """The typed ``intervention.<name>`` (``rewrite``, ``answerpool``): the composed config's, checked when
    the config was; else the shipped default ``conf/intervention/<name>.yaml``, checked as it is read."""
    typed = getattr(config.intervention, name, None) if config.intervention is not None else None
    if typed is not None:
        return typed  # type: ignore[no-any-return]
    data, path = _read_group("intervention", name)
    return validate_group("intervention", data, file=str(path), key=f"intervention.{name}")
