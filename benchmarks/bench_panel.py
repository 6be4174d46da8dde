"""Cold cost of the default panel's members on the default run's items (a fresh response cache).

    python benchmarks/bench_panel.py                 # every panel member of params.yaml
    python benchmarks/bench_panel.py gemma3-270m-cloze lexical

Needs the default run's corpus and statute index (``dvc repro statutes baselines``). Each member is
probed exactly as the probe stage probes it (same items, presentations and conditions), with a cache in a
temporary folder, so every call is paid; members run in the order given, in one process, so the cloze
configs after the first are served from the shared per-(context, option) scores, as in the pipeline.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from blindmcq import paths
from blindmcq.config.files import load_label_schemes, load_model_file
from blindmcq.config.schema import Probe, model_config
from blindmcq.datasets.items import read_items
from blindmcq.params import load_params
from blindmcq.tasks.probe import sample_items
from blindmcq.wiring.probe import probe_items


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("models", nargs="*", help="conf/model names (default: panel.models of params.yaml)")
    args = parser.parse_args()
    config = load_params()
    names = args.models or list(config.group("panel").models)
    probe: Probe = config.group("probe")
    items = sample_items(read_items(paths.ITEMS), probe.sample, probe.seed)
    label_schemes = load_label_schemes()
    with tempfile.TemporaryDirectory() as tmp:
        config = replace(config, probe=replace(probe, cache=str(Path(tmp) / "cache.sqlite")))
        for name in names:
            started = time.perf_counter()
            model = model_config(load_model_file(name))
            frame = probe_items(config, items, label_schemes=label_schemes, model_cfg=model)
            seconds = time.perf_counter() - started
            print(
                f"{name}: {len(frame)} calls on {len(items)} items in {seconds:.1f} s "
                f"({len(frame) / seconds:.1f} calls/s), load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
