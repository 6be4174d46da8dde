"""Recompose params.yaml from conf/ (what `dvc exp run -S ...` does), e.g. after editing a config file.

python scripts/compose_params.py [override ...]     # e.g. prompt=minimal model=longest
"""

from __future__ import annotations

import sys
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]


def main(overrides: list[str]) -> None:
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    (ROOT / "params.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
