"""Stage ``inputs``: stop with one line saying ``make data`` when the config names inputs under data/
that are absent; else record the inputs the run uses (``results/inputs.json``)."""

from __future__ import annotations

import sys
from pathlib import Path

from blindmcq import paths
from blindmcq.datasets.fetch import check
from blindmcq.errors import ConfigError, InputError


def main() -> int:
    """Exit 2 with one line on a missing input or a bad params.yaml, 0 when every input is there.

    Not ``run_stage``: ``check`` reads params.yaml itself, without resolving secrets (this stage runs
    first and needs none), and prints its own line, which the user sees before DVC's."""
    try:
        return check(Path.cwd(), paths.INPUTS)
    except (InputError, ConfigError) as exc:
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
