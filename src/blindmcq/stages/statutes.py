"""Stage ``statutes``: provisions (JSONL, .jsonl.xz or a folder of acts) -> BM25 index folder."""

from __future__ import annotations

import logging
import time
from typing import Any

from blindmcq import paths
from blindmcq.config.schema import validate_group
from blindmcq.params import require, section
from blindmcq.stages._main import run_stage
from blindmcq.statutes.index import build_statute_index

log = logging.getLogger(__name__)


def main() -> None:
    def body(params: dict[str, Any]) -> None:
        statutes = validate_group("statutes", section(params, "statutes"))
        started = time.perf_counter()
        index = build_statute_index(require(params, "statutes.path"), paths.STATUTE_INDEX, acts=statutes.acts)
        log.info(
            "indexed %d provisions in %.1f s -> %s",
            index.n_docs,
            time.perf_counter() - started,
            paths.STATUTE_INDEX,
        )

    run_stage("statutes", body)


if __name__ == "__main__":
    main()
