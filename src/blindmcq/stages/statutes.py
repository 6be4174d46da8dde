"""Stage ``statutes``: provisions (JSONL, .jsonl.xz or a folder of acts) -> BM25 index folder."""

from __future__ import annotations

import logging
import time

from blindmcq import paths
from blindmcq.config.schema import Config, Statutes
from blindmcq.errors import ConfigError
from blindmcq.stages._main import run_stage
from blindmcq.statutes.index import build_statute_index

log = logging.getLogger(__name__)


def main() -> None:
    def body(config: Config) -> None:
        statutes: Statutes = config.group("statutes")
        if statutes.path is None:
            raise ConfigError("statutes.path", "missing")
        started = time.perf_counter()
        index = build_statute_index(statutes.path, paths.STATUTE_INDEX, acts=statutes.acts)
        log.info(
            "indexed %d provisions in %.1f s -> %s",
            index.n_docs,
            time.perf_counter() - started,
            paths.STATUTE_INDEX,
        )

    run_stage("statutes", body)


if __name__ == "__main__":
    main()
