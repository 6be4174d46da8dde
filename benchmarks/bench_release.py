"""Benchmark: a paper-scale release (11,990 items x 13 models) pulled over HTTP and turned into every table.

Run: ``python benchmarks/bench_release.py [--items 11990] [--models 13] [--keep DIR]``.

1. Generate (not timed): a synthetic release folder in the repository's own format (``blindmcq report
   --export``'s layout), from the default bank's real items repeated to ``--items`` with new ids and
   rotated options, predictions simulated by tests/analysis/simulate.py (each model blind over the 8
   orders, forced into each slot, full on the published order: 13 calls an item; 2,026,310 rows at paper
   scale), the gate of one model, and the baselines computed by the real code (surface strategies and BM25
   over the default statutes).
2. Publish (timed): a git + DVC project ``dvc add``s the folder and ``dvc push``es it to a remote folder.
3. Pull and rebuild (timed; the paper-scale target: under 1 minute and 2 GB on 2 cores): the folder is
   served by ``http.server`` in a thread; a fresh clone runs ``blindmcq pull URL`` (DVC's http remote,
   every object verified) and ``blindmcq report --from release`` (every table, figure, report.md, the
   HTML explorer). Each step runs as a child under ``/usr/bin/time``: wall seconds, CPU seconds, peak RSS.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _report import result  # run as a script: benchmarks/ is on sys.path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "analysis")]
SHIPPED = ROOT / "releases" / "default"
PAPER_ITEMS, PAPER_MODELS = 11_990, 13
LIMIT_S, LIMIT_MIB = 60, 2048  # the paper-scale target for every table, figure and the explorer, 2 cores


def synthetic_items(n: int) -> list:
    """The default bank's four-option items, repeated with new ids (each copy's options rotated) to ``n``."""
    import dataclasses

    from blindmcq.datasets.items import read_items

    base = [
        it
        for it in read_items(SHIPPED / "results/corpus/items.jsonl")
        if it.n_options == 4 and it.key is not None
    ]
    out = []
    for i in range(n):
        it, shift = base[i % len(base)], (i // len(base)) % 4
        options = tuple(it.options[shift:]) + tuple(it.options[:shift])
        out.append(
            dataclasses.replace(
                it,
                id=f"synthetic-paper-{i + 1}",
                bank="paper",
                number=i + 1,
                options=options,
                key=(it.key - shift) % 4,
            )
        )
    return out


def generate(folder: Path, n_items: int, n_models: int, work: Path) -> dict[str, int]:
    """Write the synthetic release folder; return its size facts."""
    import pandas as pd
    import yaml
    from simulate import sim_panel, simulate

    from blindmcq import paths
    from blindmcq.analysis.gate import gate, write_gate
    from blindmcq.answers.predictions import write_predictions
    from blindmcq.config.schema import Config
    from blindmcq.datasets.items import write_items
    from blindmcq.reporting.bundle import dir_listing, export_bundle, md5_bytes
    from blindmcq.stages.baselines import build_baselines
    from blindmcq.statutes.index import build_statute_index

    project = work / "generate"
    project.mkdir(parents=True)
    before = Path.cwd()
    os.chdir(project)  # the stage functions read and write the project's cwd-relative paths
    try:
        items = synthetic_items(n_items)
        write_items(paths.ITEMS, items)
        verification = json.loads((SHIPPED / "results/corpus/verification.json").read_text(encoding="utf-8"))
        verification["n_items"] = len(items)
        (paths.CORPUS_DIR / "verification.json").write_text(json.dumps(verification), encoding="utf-8")
        build_statute_index(ROOT / "defaults/statutes/provisions-default.jsonl", paths.STATUTE_INDEX)
        build_baselines(Config())  # the schema's defaults: seed 0, the default statutes
        models = sim_panel(n_models)
        frame = simulate(items, models, seed=0)
        rows = len(frame)
        write_predictions(frame, paths.PREDICTIONS)
        write_gate(
            paths.GATE_DIR / "gate.json", gate(frame, gate_model=models[min(3, n_models - 1)].name, k=5)
        )
        del frame
        labels = {m.name: "simulated" for m in models}
        (paths.PREDICTIONS_DIR / "models.json").write_text(
            json.dumps({"model": "m00", "models": labels, "option_only": []}), encoding="utf-8"
        )
        params = yaml.safe_load((SHIPPED / "params.yaml").read_text(encoding="utf-8"))
        params["dataset"] = {**params["dataset"], "name": "paper-synthetic"}
        Path("params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
        # the run's commit pins what it wrote (dvc.lock, params.yaml), as a real run's does: the release
        # folder is checked against it (no dvc.yaml: DVC itself leaves the lone dvc.lock alone)
        outs = [
            {"path": d, "hash": "md5", "md5": md5_bytes(dir_listing(Path(d))) + ".dir"}
            for d in ("results/corpus", "results/baselines", "results/predictions", "results/gate")
        ]
        lock = {"schema": "2.0", "stages": {"run": {"cmd": "synthetic", "outs": outs}}}
        Path("dvc.lock").write_text(yaml.safe_dump(lock), encoding="utf-8")
        Path(".gitignore").write_text("/results/\n", encoding="utf-8")
        for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "synthetic run"]):
            subprocess.run(
                ["git", "-c", "user.name=bench", "-c", "user.email=b@example.org", *cmd], check=True
            )
        manifest = export_bundle(project, folder)
    finally:
        os.chdir(before)
    shutil.rmtree(project / "results")  # the git history stays: the publisher is a clone of it
    size = sum(f["bytes"] for f in manifest["files"].values())
    _ = pd  # pandas is imported for simulate's frames
    return {"items": len(items), "models": n_models, "rows": rows, "bytes": size}


class Served:
    def __init__(self, folder: Path) -> None:
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder))
        )
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Run under /usr/bin/time: wall s, CPU s, peak RSS MiB; fail loudly on a non-zero exit."""
    fmt = "BENCH %e %U %S %M"
    done = subprocess.run(
        ["/usr/bin/time", "-f", fmt, *cmd], cwd=cwd, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    line = next(ln for ln in reversed(done.stderr.splitlines()) if ln.startswith("BENCH "))
    wall, user, system, rss_kb = (float(x) for x in line.split()[1:])
    return {"wall_s": wall, "cpu_s": user + system, "peak_rss_mib": rss_kb / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=PAPER_ITEMS)
    parser.add_argument("--models", type=int, default=PAPER_MODELS)
    parser.add_argument("--threads", type=int, default=2, help="BLAS/Arrow threads (the target is 2 cores)")
    parser.add_argument("--keep", type=Path, help="keep the work folder here (default: a temporary one)")
    args = parser.parse_args()

    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-release-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "GIT_"))}
    env.update(
        PYTHONPATH=str(ROOT / "src"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        DVC_NO_ANALYTICS="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.org",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.org",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        **{v: str(args.threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
    )
    try:
        t = time.perf_counter()
        project = work / "publisher"
        facts = generate(work / "release", args.items, args.models, work)
        subprocess.run(["git", "clone", "-q", str(work / "generate"), str(project)], env=env, check=True)
        shutil.move(work / "release", project / "release")
        print(
            f"generated {facts['items']:,} items x {facts['models']} models = {facts['rows']:,} rows, "
            f"release folder {facts['bytes'] / 2**20:.1f} MiB ({time.perf_counter() - t:.0f} s, not timed)"
        )
        py = sys.executable
        subprocess.run([py, "-m", "dvc", "init", "-q"], cwd=project, env=env, check=True)
        steps = {"dvc add": timed([py, "-m", "dvc", "add", "-q", "release"], project, env)}
        subprocess.run(
            [py, "-m", "dvc", "remote", "add", "store", "../store"], cwd=project, env=env, check=True
        )
        subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "release"], cwd=project, env=env, check=True)
        steps["dvc push (publisher)"] = timed([py, "-m", "dvc", "push", "-q", "-r", "store"], project, env)

        served = Served(work / "store")
        clone = work / "newcomer"
        subprocess.run(["git", "clone", "-q", str(project), str(clone)], env=env, check=True)
        steps["blindmcq pull URL"] = timed([py, "-m", "blindmcq.cli", "pull", served.url], clone, env)
        steps["blindmcq report --from"] = timed(
            [py, "-m", "blindmcq.cli", "report", "--from", "release", "--out", "report"], clone, env
        )
        served.server.shutdown()
        tables = len(list((clone / "report" / "tables").glob("*.csv")))
        figures = len(list((clone / "report" / "figures").glob("*.png")))
        print(f"{'step':>24}  wall s   CPU s  peak RSS MiB")
        for name, s in steps.items():
            print(f"{name:>24}: {s['wall_s']:6.1f}  {s['cpu_s']:6.1f}  {s['peak_rss_mib']:8.0f}")
        pull = ("blindmcq pull URL", "blindmcq report --from")
        wall = sum(steps[k]["wall_s"] for k in pull)
        rss = max(steps[k]["peak_rss_mib"] for k in pull)
        cpu = sum(steps[k]["cpu_s"] for k in pull)
        print(
            f"{'pull + every table':>24}: {wall:6.1f}  {cpu:6.1f}  {rss:8.0f}"
            f"   ({tables} tables as CSV, {figures} figures; load average {os.getloadavg()[0]:.1f})"
        )
        report = steps["blindmcq report --from"]
        paper = args.items == PAPER_ITEMS and args.models == PAPER_MODELS
        result(
            "release",
            f"report --from {report['wall_s']:.1f} s, {report['peak_rss_mib']:.0f} MiB"
            f" ({facts['rows']:,} rows)",
            f"{LIMIT_S} s and {LIMIT_MIB} MiB at paper scale",
            min(LIMIT_S / report["wall_s"], LIMIT_MIB / report["peak_rss_mib"]) if paper else None,
            "" if paper else "short setting: the limit is for the paper scale (--items 11990 --models 13)",
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
