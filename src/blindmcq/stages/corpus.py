"""Stage ``corpus``: the dataset (PDF tables or a bank file) -> ``results/corpus/items.jsonl``."""

from __future__ import annotations

import logging

from blindmcq import paths
from blindmcq.config.schema import Config, as_written
from blindmcq.datasets.registry import build_corpus
from blindmcq.stages._main import run_stage

log = logging.getLogger(__name__)


def main() -> None:
    def body(config: Config) -> None:
        # the dataset group as written: the corpus fingerprint hashes it so
        report = build_corpus(as_written(config, "dataset"), paths.CORPUS_DIR, seed=config.seed)
        log.info("wrote %s (%s)", paths.ITEMS, {k: v for k, v in report.items() if k.startswith("n_")})

    run_stage("corpus", body)


if __name__ == "__main__":
    main()
