"""``make run`` cold, in units of a CPU-bound reference timed beside it, against the 5-minute limit.

    python benchmarks/bench_make_run.py [--skip] [--keep]

Clones this checkout's committed HEAD into a scratch folder and runs ``dvc repro`` of the default
pipeline there, as ``make run`` does (``OMP_WAIT_POLICY=PASSIVE``), from an empty response cache; the
converted model weights are the user's (``~/.cache/blindmcq/models`` or ``$BLINDMCQ_CACHE/models``), so
the GGUF conversion is paid beforehand, as on any second run. Wall seconds alone say little on a shared
or other machine, so the run is divided by the wall seconds of a fixed fp32 matmul workload of the
default model's linear shapes (``reference_seconds``, best of 9), timed just before and just after it,
with nothing of the run beside it: the unit is the mean of the two, and a machine twice as fast does
both in half the time. It is never timed while the run goes: the run holds both cores then, so such a
timing measures the run's own contention (about twice the quiet one on 2 cores) and dividing by it
flatters the run, and each timing takes both cores from the run it measures. The limit, 5 minutes on
the 2-core Intel Xeon where the target was set, is ``LIMIT_UNITS`` of the same reference (300 s /
``REFERENCE_AT_TARGET`` s, that machine's reference, measured at a load of 1.6). The scratch clone must
end with ``git status`` clean: the run reproduced the committed ``dvc.lock`` outputs. It takes minutes,
so ``make bench`` runs it only under ``BENCH_ARGS=--full`` (``--skip`` prints the skipped line). The
stages run without ``PYTHONDONTWRITEBYTECODE``, as the Makefile's recipes do (with it, every stage would
compile every module it imports again). The ratio holds only on a quiet machine: other jobs that come and
go during the run are not in the unit, so the bench prints the CPU seconds every other process on the
machine used meanwhile (``/proc/stat``'s busy time less the run's own; Linux only).

``--count-flops`` also counts the arithmetic of the run's model passes (``_flop_count/sitecustomize.py`` on
the stages' ``PYTHONPATH``: every torch linear layer and attention call, per stage) and prints its floor:
those FLOPs in reference units, i.e. the run's length if every one of them went at the reference's own
rate with nothing else to do. The output projection (262k rows, all of its 671 MB read per pass) runs
well below that rate at the few rows a pass reads, so the floor is a bound, not an estimate. It then
times everything else: ``dvc repro --force`` in the same clone, whose response cache now answers every
call, so no stage loads the model (the hook counts its FLOPs too, and says so if there are any; ``git
status`` must stay clean). The two added are the least this default run takes on this machine with any
fp32 implementation of the model and the rest of the pipeline as it is, model loading left out. The
wall figure of a counted run includes the hook's own (small) cost.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, result

LIMIT_S = 300.0
# the reference's wall seconds on the machine of the target (Intel Xeon, 2 cores; best of 9 at load 1.6),
# measured with ``reference_seconds()`` at this file's defaults
REFERENCE_AT_TARGET = 0.88
LIMIT_UNITS = LIMIT_S / REFERENCE_AT_TARGET
# Gemma 3 270M: hidden 640, MLP 2048; 256 rows is a letter batch of an item (13 orders x ~20 tokens)
SHAPES = ((640, 2048), (2048, 640), (640, 1024), (1024, 640))
ROWS, REPEATS = 256, 60
# the reference's arithmetic: one reference unit is this many FLOPs at the reference's rate
REFERENCE_FLOPS = 2.0 * ROWS * sum(k * n for k, n in SHAPES) * REPEATS
FLOP_HOOK = Path(__file__).resolve().parent / "_flop_count"


def reference_seconds(repeats: int = 9) -> float:
    """The best of ``repeats`` timings of the fixed fp32 workload (``SHAPES`` x ``REPEATS`` at ``ROWS``
    rows, ``REFERENCE_FLOPS``: 120.8 GFLOP), on torch's default threads. Nine, as at the target: the best
    of three read 0.72 to 0.95 s on this quiet host within one hour."""
    import torch  # here: the skipped line needs no torch

    gen = torch.Generator().manual_seed(0)
    weights = [torch.randn(k, n, generator=gen) for k, n in SHAPES]
    x = {k: torch.randn(ROWS, k, generator=gen) for k, _ in SHAPES}
    for w in weights:  # warm-up
        torch.mm(x[w.shape[0]], w)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(REPEATS):
            for w in weights:
                torch.mm(x[w.shape[0]], w)
        best = min(best, time.perf_counter() - started)
    return best


def run_env(clone: Path, flop_log: Path | None = None) -> dict[str, str]:
    """The environment ``make run`` gives ``dvc repro``: passive OpenMP waits, this Python's bin first on
    PATH, and no ``PYTHONDONTWRITEBYTECODE`` (the Makefile unexports it). ``flop_log``: the FLOP-counting
    hook on the path, writing there."""
    path = str(clone / "src") if flop_log is None else os.pathsep.join((str(FLOP_HOOK), str(clone / "src")))
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", PYTHONPATH=path)
    if flop_log is not None:
        env["BLINDMCQ_FLOP_LOG"] = str(flop_log)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``: every state but idle
    and iowait), or None where there is no ``/proc/stat``."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields[:8]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def cold_run(
    workdir: Path, flop_log: Path | None = None
) -> tuple[float, float, list[str], int, str, float | None]:
    """(wall s, CPU s of the children, ``git status --short`` lines, exit code, output tail, CPU s of
    every other process meanwhile or None) of a cold ``dvc repro`` in a clone of ROOT under
    ``workdir``; with ``flop_log``, its stages' FLOPs counted there."""
    clone = workdir / "p"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    before, busy_before = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    started = time.perf_counter()
    env = run_env(clone, flop_log)
    proc = subprocess.run(["dvc", "repro"], cwd=clone, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after, busy_after = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    others = None if busy_before is None or busy_after is None else max(busy_after - busy_before - cpu, 0.0)
    status = subprocess.run(
        ["git", "status", "--short"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return wall, cpu, status, proc.returncode, (proc.stdout + proc.stderr)[-2000:], others


def warm_rerun(clone: Path, flop_log: Path) -> tuple[float, list[str]]:
    """(wall s, ``git status --short`` lines) of ``dvc repro --force`` in ``clone`` after its cold run:
    every stage again, every call answered by the response cache (FLOPs counted in ``flop_log``)."""
    started = time.perf_counter()
    command = ["dvc", "repro", "--force"]
    subprocess.run(command, cwd=clone, env=run_env(clone, flop_log), capture_output=True, check=True)
    wall = time.perf_counter() - started
    status = subprocess.run(
        ["git", "status", "--short"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return wall, status


def flop_floor(log: Path) -> tuple[float, str]:
    """(the counted FLOPs in reference units, one line per stage and kind) from the hook's ``log``."""
    totals: dict[str, dict[str, float]] = {}
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        row = json.loads(line)
        stage = Path(row["argv"][0]).stem
        for kind in ("linear", "head", "attention"):
            totals.setdefault(stage, {}).setdefault(kind, 0.0)
            totals[stage][kind] += row[kind]
    flops = sum(sum(kinds.values()) for kinds in totals.values())

    def kind(name: str, value: float) -> str:
        return f"{name} {value / 1e12:.2f} TFLOP ({value / REFERENCE_FLOPS:.0f} units)"

    lines = [f"  {stage}: " + ", ".join(kind(*pair) for pair in by.items()) for stage, by in totals.items()]
    return flops / REFERENCE_FLOPS, "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skip", action="store_true", help="print the skipped line (make bench's default)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch clone (its path is printed)")
    parser.add_argument(
        "--count-flops", action="store_true", help="count the model passes' FLOPs and print their floor"
    )
    args = parser.parse_args()
    limit = (
        f"limit {LIMIT_S / 60:.0f} min = {LIMIT_UNITS:.0f} ref units "
        f"({LIMIT_S:.0f} s / {REFERENCE_AT_TARGET:.2f} s)"
    )
    if args.skip:
        result("make-run", "cold dvc repro: not run", limit, None, "skipped: runs under BENCH_ARGS=--full")
        return 0
    ref_before = reference_seconds()
    workdir = Path(tempfile.mkdtemp(prefix="bench-make-run-"))
    flop_log = workdir / "flops.jsonl" if args.count_flops else None
    try:
        wall, cpu, status, code, tail, others = cold_run(workdir, flop_log=flop_log)
        floor = flop_floor(flop_log) if flop_log else None
        rest = warm_rerun(workdir / "p", workdir / "rerun-flops.jsonl") if flop_log and not code else None
        rerun_units = flop_floor(workdir / "rerun-flops.jsonl")[0] if rest else 0.0
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    ref_after = reference_seconds()
    ref = statistics.mean([ref_before, ref_after])  # the machine with nothing of the run beside it
    units = wall / ref
    load = os.getloadavg()[0]
    print(
        f"cold dvc repro: {wall:.0f} s wall, {cpu:.0f} CPU-s, exit {code}; reference {ref_before:.2f} s "
        f"before, {ref_after:.2f} s after (mean {ref:.2f} s, the unit); {units:.0f} ref units against "
        f"{LIMIT_UNITS:.0f}; other processes meanwhile "
        + ("unknown" if others is None else f"{others:.0f} CPU-s")
        + f"; load {load:.1f}"
        + (f"; scratch clone {workdir / 'p'}" if args.keep else "")
    )
    if floor is not None:
        print(
            f"model arithmetic: {floor[0]:.0f} ref units if every FLOP went at the reference's rate "
            f"({floor[0] / LIMIT_UNITS:.2f}x the limit of {LIMIT_UNITS:.0f}), by stage:\n{floor[1]}"
        )
    if rest is not None and floor is not None:
        floor_units = floor[0] + rest[0] / ref
        print(
            f"everything else (dvc repro --force, every call cached, no model loaded): {rest[0]:.0f} s = "
            f"{rest[0] / ref:.0f} ref units; with the pipeline around the model as it is, the run takes at "
            f"least {floor_units:.0f} units on any fp32 model implementation "
            f"({floor_units / LIMIT_UNITS:.2f}x the limit)"
            + ("" if not rest[1] else f"; git status NOT clean after it ({len(rest[1])} paths)")
            + ("" if not rerun_units else f"; NOT model-free: it computed {rerun_units:.1f} units of FLOPs")
        )
        status = status + rest[1]
    if code:
        print(tail, file=sys.stderr)
        return 1
    if status:
        print("git status after the run is not clean:\n" + "\n".join(status), file=sys.stderr)
    note = "git status clean" if not status else f"git status NOT clean ({len(status)} paths)"
    result(
        "make-run",
        f"cold dvc repro {wall:.0f} s = {units:.0f} ref units ({cpu:.0f} CPU-s)",
        limit,
        LIMIT_UNITS / units,
        f"{note}; ref {ref_before:.2f} s before, {ref_after:.2f} s after; "
        + ("" if others is None else f"other processes {others:.0f} CPU-s meanwhile; ")
        + f"load {load:.1f}"
        + (f"; model arithmetic alone {floor[0]:.0f} units" if floor is not None else "")
        + (f", everything else {rest[0] / ref:.0f}" if rest is not None else ""),
    )
    return 0 if not status else 1


if __name__ == "__main__":
    sys.exit(main())
