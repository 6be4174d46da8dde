"""``blindmcq preview [OVERRIDES...] --items N``: the exact wire request of every call the probe would
make for its first N items, one JSON object a line, with the backend, endpoint and cache key. No call.

The config is composed from ``conf/`` with Hydra's compose API, as ``dvc exp run -S`` composes
``params.yaml`` (by the command line, ``blindmcq.cli.preview``; this module is its core); the items
are the probe stage's seeded sample (``probe.sample``, ``probe.seed``) of
``results/corpus/items.jsonl``, or, before the corpus stage has run, of the configured dataset read the
corpus stage's way (the default bank's PDFs are extracted into a temporary folder: about a minute).
The requests come from ``blindmcq.tasks.probe.build_jobs``, the builder the probe itself uses, and the key
from ``request_key``, the one the runner caches under (lm-eval's ``--write_out`` is the precedent).

Each line: ``item_id``, ``condition``, ``order_id``, ``model`` (config name), ``backend`` (its name),
``endpoint`` (null where the backend sends to no endpoint that changes the answer), ``key`` and
``wire`` (the body the backend would send; for Bedrock the Converse parameters).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from blindmcq import paths
from blindmcq.backends.base import Backend, request_key
from blindmcq.backends.registry import make_backend
from blindmcq.config.schema import Config, Labels
from blindmcq.datasets.items import Item, read_items
from blindmcq.tasks.probe import PresentationSetup, build_jobs, sample_items

COMPOSED = "composed config (conf/config.yaml + overrides)"


def preview_items(config: Config, n: int) -> list[Item]:
    """The first ``n`` of the items the probe stage would ask, in its order. ``config``: the composed
    config, checked (``validate``) from its mapping, which the corpus's fingerprint is compared with."""
    from blindmcq.datasets.registry import corpus_mismatch

    # items of another dataset config are never previewed
    reason = corpus_mismatch(config, paths.ITEMS)
    if reason is None:
        items = read_items(paths.ITEMS)
    else:
        from blindmcq.datasets.registry import read_dataset

        dataset = config.group("dataset")  # a missing group is named
        print(
            f"blindmcq preview: {reason}; reading the dataset '{dataset.name}' the corpus stage's way"
            " (the default bank's PDFs take about a minute)",
            file=sys.stderr,
        )
        items, _report = read_dataset(dataset, seed=config.seed)
    probe = config.group("probe")
    return sample_items(items, probe.sample, probe.seed)[:n]


def preview_lines(
    config: Config,
    items: Sequence[Item],
    *,
    label_schemes: Mapping[str, Labels],
    backend: Backend | None = None,
) -> Iterator[dict[str, Any]]:
    """One dict per call the probe would make for ``items`` (see the module docstring); ``label_schemes``
    as the probe stage reads them (``config.files.load_label_schemes``)."""
    model_cfg = config.group("model")
    _, jobs = build_jobs(
        items,
        model_cfg=model_cfg,
        setup=PresentationSetup.from_params(config, label_schemes),
    )
    backend = backend or make_backend(model_cfg)
    for presentation, request in jobs:
        yield {
            "item_id": presentation.item_id,
            "condition": presentation.condition,
            "order_id": presentation.order_id,
            "model": request.model,
            "backend": backend.name,
            "endpoint": getattr(backend, "endpoint", None),
            "key": request_key(backend, request),
            "wire": backend.wire_request(request),
        }


def _served_by(line: Mapping[str, Any]) -> str:
    return f"{line['model']} ({line['backend']})"


def call_summary(lines: Sequence[Mapping[str, Any]], n_items: int) -> str:
    """One line after the calls: how many, per condition, how many distinct requests (cache keys: a
    repeated request is sent once), the model and backend."""
    from collections import Counter

    per = Counter(str(line["condition"]) for line in lines)
    keys = len({line["key"] for line in lines})
    model = ", ".join(sorted(set(map(_served_by, lines)))) or "no model"
    conditions = ", ".join(f"{n} {c}" for c, n in sorted(per.items()))
    return (
        f"blindmcq preview: {len(lines)} calls for {n_items} item{'s' * (n_items != 1)} "
        f"({conditions or 'none'}), {keys} distinct requests; {model}; no call was made"
    )
