"""``blindmcq preview [OVERRIDES...] --items N``: the exact wire request of every call the probe would
make for its first N items, one JSON object a line, with the backend, endpoint and cache key. No call.

The config is composed from ``conf/`` with Hydra's compose API, as ``dvc exp run -S`` composes
``params.yaml``; the items are the probe stage's seeded sample (``probe.sample``, ``probe.seed``) of
``results/corpus/items.jsonl``, or, before the corpus stage has run, of the configured dataset read the
corpus stage's way (the default bank's PDFs are extracted into a temporary folder: about a minute).
The requests come from ``blindmcq.tasks.probe.build_jobs``, the builder the probe itself uses, and the key
from ``request_key``, the one the runner caches under (lm-eval's ``--write_out`` is the precedent).

Each line: ``item_id``, ``condition``, ``order_id``, ``model`` (config name), ``backend`` (its name),
``endpoint`` (null where the backend sends to no endpoint that changes the answer), ``key`` and
``wire`` (the body the backend would send; for Bedrock the Converse parameters).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from blindmcq import paths
from blindmcq.backends.base import Backend, request_key
from blindmcq.backends.registry import make_backend
from blindmcq.config.files import load_label_schemes
from blindmcq.config.schema import validate
from blindmcq.datasets.items import Item, read_items
from blindmcq.errors import BlindMCQError, ConfigError
from blindmcq.params import require, section
from blindmcq.tasks.probe import PresentationSetup, build_jobs, sample_items

COMPOSED = "composed config (conf/config.yaml + overrides)"


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


def preview_items(params: dict[str, Any], n: int) -> list[Item]:
    """The first ``n`` of the items the probe stage would ask, in its order."""
    from blindmcq.datasets.fingerprint import corpus_mismatch

    reason = corpus_mismatch(params, paths.ITEMS)  # items of another dataset config are never previewed
    if reason is None:
        items = read_items(paths.ITEMS)
    else:
        from blindmcq.datasets.registry import read_dataset

        name = section(params, "dataset").get("name")
        print(
            f"blindmcq preview: {reason}; reading the dataset '{name}' the corpus stage's way"
            " (the default bank's PDFs take about a minute)",
            file=sys.stderr,
        )
        items, _report = read_dataset(section(params, "dataset"), seed=int(params.get("seed", 0)))
    probe = section(params, "probe")
    return sample_items(items, probe.get("sample"), int(probe.get("seed", 0)))[:n]


def preview_lines(
    params: dict[str, Any],
    items: Sequence[Item],
    *,
    label_schemes: Mapping[str, Mapping[str, Any]],
    backend: Backend | None = None,
) -> Iterator[dict[str, Any]]:
    """One dict per call the probe would make for ``items`` (see the module docstring); ``label_schemes``
    as the probe stage reads them (``config.files.load_label_schemes``)."""
    model_cfg = section(params, "model")
    _, jobs = build_jobs(
        items,
        model_cfg=model_cfg,
        setup=PresentationSetup.from_params(params, label_schemes),
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
        items = preview_items(params, args.items)
        lines = []
        for line in preview_lines(params, items, label_schemes=schemes):
            print(json.dumps(line, ensure_ascii=False, sort_keys=True, default=str))
            lines.append(line)
        print(call_summary(lines, len(items)), file=sys.stderr)  # stdout stays one JSON object a line
    except BlindMCQError as exc:
        print(f"blindmcq preview: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
