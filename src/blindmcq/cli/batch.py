"""``blindmcq batch submit|status|collect``: the probe's uncached calls through Bedrock batch inference.

The command line of ``tasks.batch`` (its docstring says more); the first paragraph above is the
command's ``--help`` description.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindmcq.cli._fail import fail
from blindmcq.config.files import CONF_DIR, load_label_schemes
from blindmcq.config.schema import validate
from blindmcq.errors import BlindMCQError, ConfigError
from blindmcq.tasks.batch import FLAGS, STATE_DIR, collect_cmd, status_cmd, submit_cmd


def compose(overrides: Sequence[str], conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """The composed config (as ``params.yaml`` would hold it) for Hydra ``overrides``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf

    from blindmcq.secrets import install_env_resolver

    install_env_resolver()  # values from ${oc.env:...} are secrets wherever they land
    try:
        with initialize_config_dir(config_dir=str(conf_dir), version_base=None):
            cfg = hydra_compose(config_name="config", overrides=list(overrides))
    except HydraException as exc:
        raise ConfigError("overrides", str(exc).splitlines()[0]) from exc
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="blindmcq batch", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    p_submit = sub.add_parser("submit", help="write the uncached calls to S3 and create the batch jobs")
    p_submit.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. model=nova-pro probe.sample=5")
    for key, flag in FLAGS.items():
        kind = int if key in ("job_timeout_hours", "min_records") else str
        p_submit.add_argument(flag, dest=key, type=kind)
    sub.add_parser("status", help="poll the submitted jobs")
    sub.add_parser("collect", help="load finished jobs' outputs into the response cache")
    for p in sub.choices.values():
        p.add_argument("--state-dir", type=Path, default=STATE_DIR, help="where the job manifests live")
    args = parser.parse_args(argv)
    try:
        if args.action == "submit":
            flags = {key: getattr(args, key) for key in FLAGS}
            config = validate(compose(args.overrides), file=None)  # the composed config enters here, typed
            submit_cmd(config, flags, label_schemes=load_label_schemes(), state_dir=args.state_dir)
        elif args.action == "status":
            status_cmd(state_dir=args.state_dir)
        else:
            print(json.dumps(collect_cmd(state_dir=args.state_dir)))
    except BlindMCQError as exc:
        return fail(None, exc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
