"""Stage ``corpus``: the dataset (PDF tables or a bank file) -> ``results/corpus/items.jsonl``."""

from __future__ import annotations

import logging
from typing import Any

from blindmcq import paths
from blindmcq.config.schema import as_config
from blindmcq.datasets.registry import build_corpus
from blindmcq.params import section
from blindmcq.stages._main import run_stage

log = logging.getLogger(__name__)


def main() -> None:
    def body(params: dict[str, Any]) -> None:
        report = build_corpus(section(params, "dataset"), paths.CORPUS_DIR, seed=as_config(params).seed)
        log.info("wrote %s (%s)", paths.ITEMS, {k: v for k, v in report.items() if k.startswith("n_")})

    run_stage("corpus", body)


if __name__ == "__main__":
    main()
