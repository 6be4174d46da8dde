"""``blindmcq preview [OVERRIDES...] --items N``: the exact wire request and cache key of every call the
probe would make for its first N items (``tasks.preview``; see its docstring). No call."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindmcq.cli._fail import fail
from blindmcq.config.files import load_label_schemes
from blindmcq.config.schema import validate
from blindmcq.errors import BlindMCQError, ConfigError
from blindmcq.params import require
from blindmcq.tasks.preview import COMPOSED, call_summary, preview_items, preview_lines


def compose_params(overrides: Sequence[str], conf_dir: str | Path = "conf") -> dict[str, Any]:
    """The composed, resolved config for ``overrides`` (``group=option``, ``key=value``)."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from blindmcq.secrets import install_env_resolver

    install_env_resolver()  # values from ${oc.env:...} are secrets wherever they land
    conf = Path(conf_dir).resolve()
    if not (conf / "config.yaml").is_file():
        raise ConfigError("--conf", f"no config.yaml in {conf} (run from the project root or pass --conf)")
    try:
        with initialize_config_dir(config_dir=str(conf), version_base=None):
            cfg = compose(config_name="config", overrides=list(overrides))
        params = OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError("overrides", f"{' '.join(overrides) or '(none)'}: {first}") from exc
    if not isinstance(params, dict):
        raise ConfigError("config", "the composed config is not a mapping")
    # the same schema check as every other entry point (params.load_params, the sweep)
    validate(params, file=COMPOSED)
    return params  # type: ignore[return-value]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="blindmcq preview",
        description="Print the exact wire request and cache key of each probe call; makes no call.",
    )
    parser.add_argument(
        "overrides", nargs="*", help="Hydra overrides, e.g. model=sonnet-4.6 reasoning=thinking"
    )
    parser.add_argument("--items", type=int, default=1, help="how many of the probe's items (default 1)")
    parser.add_argument("--conf", default="conf", help="the Hydra config folder (default ./conf)")
    args = parser.parse_args(argv)
    try:
        if args.items < 1:
            raise ConfigError("--items", f"must be at least 1, got {args.items}")
        params = compose_params(args.overrides, args.conf)
        require(params, "model.name")
        schemes = load_label_schemes(args.conf)
        config = validate(params, file=COMPOSED)
        items = preview_items(config, args.items)
        lines = []
        for line in preview_lines(config, items, label_schemes=schemes):
            print(json.dumps(line, ensure_ascii=False, sort_keys=True, default=str))
            lines.append(line)
        print(call_summary(lines, len(items)), file=sys.stderr)  # stdout stays one JSON object a line
    except BlindMCQError as exc:
        return fail("preview", exc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
