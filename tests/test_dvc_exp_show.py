"""The README's one ``dvc exp show`` command on three experiments: readable in a 110-column terminal, each
row showing what its experiment changed and the headline figures. Runs in a tiny DVC project with the
project's real ``params.yaml`` and the report stage's real metrics files (``dvc.yaml``), written by a
stand-in stage through the real ``headline_figures``; no model, a few seconds an experiment."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blindmcq.reporting.markdown import HEADLINE

REPO = Path(__file__).resolve().parents[1]
WIDTH = 110

# The stand-in report stage: figures that depend on what each experiment changes (the surface figures
# only on the bank, as in the pipeline), a detail file with many per-model keys, the headline file.
STAGE = """
import hashlib, json, sys
import yaml
from blindmcq.reporting.markdown import headline_figures
p = yaml.safe_load(open("params.yaml"))
key = json.dumps([p[g]["name"] for g in ("model", "gate_model", "prompt", "labels", "protocol")])
h = hashlib.sha256(key.encode()).digest()
bank = hashlib.sha256(p["dataset"]["name"].encode()).digest()
metrics = {"blind_acc/all": round(h[0] / 255, 3), "excess/all": round(h[1] / 255 - 0.5, 3),
           "gate/n_rejected": float(h[2] % 60), "table2/longest": round(bank[0] / 255, 3),
           "table2/lexical_search": round(bank[1] / 255, 3), "agreement": round(h[3] / 255, 3)}
metrics |= {f"panel/m{i}/blind_acc/all": round(h[4 + i] / 255, 3) for i in range(20)}
out = dict(zip(sys.argv[1::2], sys.argv[2::2]))
json.dump(metrics, open(out["detail"], "w"), indent=2, sort_keys=True)
json.dump(headline_figures(metrics), open(out["headline"], "w"), indent=2)
"""


def readme_command() -> str:
    lines = [
        ln for ln in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
        if ln.startswith("dvc exp show --only-changed --hide-workspace")
    ]  # fmt: skip
    assert len(lines) == 1, "the README should give one headline `dvc exp show` command"
    return lines[0]


def report_metrics_files() -> list[str]:
    stage = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]["report"]
    return [next(iter(m)) if isinstance(m, dict) else m for m in stage["metrics"]]


def test_the_report_stage_declares_a_small_headline_file_apart() -> None:
    files = report_metrics_files()
    assert files[0] == "reports/headline.json" and "reports/metrics.json" in files
    headline = json.loads((REPO / "reports/headline.json").read_text(encoding="utf-8"))
    metrics = json.loads((REPO / "reports/metrics.json").read_text(encoding="utf-8"))
    assert list(headline) == list(HEADLINE)  # the committed file has every headline figure, in order
    assert all(headline[short] == metrics[key] for short, key in HEADLINE.items())
    assert all("/" not in short and short not in metrics for short in HEADLINE)  # no column clash


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


@pytest.mark.full  # DVC experiments of a pipeline, end to end
def test_readme_exp_show_fits_110_columns_and_shows_what_differs(tmp_path: Path) -> None:
    dvc = shutil.which("dvc", path=str(Path(sys.executable).parent)) or shutil.which("dvc")
    if dvc is None:
        pytest.skip("dvc is not installed")
    root = tmp_path / "p"
    root.mkdir()
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    (root / "stage.py").write_text(STAGE, encoding="utf-8")
    headline, detail = report_metrics_files()[:2]
    (root / "reports").mkdir()
    stage = {
        "cmd": f"{shlex.quote(sys.executable)} stage.py headline {headline} detail {detail}",
        "deps": ["stage.py"],
        "params": ["dataset", "model", "gate_model", "prompt", "labels", "protocol", "probe"],
        "metrics": [{path: {"cache": False}} for path in (headline, detail)],
    }
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"report": stage}}), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(dvc).parent), os.environ.get("PATH", "")]),
        "COLUMNS": str(WIDTH),
        "DVC_NO_ANALYTICS": "1",
    }

    def run(*args: str) -> str:
        done = subprocess.run(list(args), cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{args}: {done.stderr[-2000:]}"
        return done.stdout

    git(root, "init", "-q")
    run(dvc, "init", "-q")
    run(dvc, "repro", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "baseline")
    # three experiments as the README's lines make them: a config group's choice changes its name and
    # the values under it (here only the name and one value each)
    experiments = {
        "labels": ["-S", "labels.name=cyrillic", "-S", "labels.symbols=['А','Б','В','Г','Д']"],
        "protocol": ["-S", "protocol.name=md", "-S", "protocol.extraction=match"],
        "prompt": ["-S", "prompt.name=minimal", "-S", "prompt.system=Answer."],
    }
    # the README's $M: another probed model than the default baseline's, and the surface panel
    m = ["-S", "model.name=longest", "-S", "model.backend=heuristic", "-S", "panel.name=surface",
         "-S", "panel.models=[longest,most-words,lexical]"]  # fmt: skip
    for name, sets in experiments.items():
        run(dvc, "exp", "run", "-q", "-n", f"exp-{name}", *m, *sets)
        git(root, "checkout", "-q", "--", "params.yaml")  # each experiment from the baseline's params

    out = run("bash", "-c", readme_command())
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert max(len(ln) for ln in lines) <= WIDTH, out
    assert "…" not in out, out  # no column collapsed
    header = next(ln for ln in lines if "Experiment" in ln).split()
    assert {"labels.name", "protocol.name", "prompt.name", "model.name"} <= set(header), header
    assert {"blind", "rejected"} <= set(header), header
    # the bank is the same in every row: its surface figures and the unchanged groups stay out
    assert not {
        "longest",
        "lexical",
        "dataset.name",
        "labels.symbols",
        "panel.name",
        "gate_model.name",
    } & set(header), header
    baseline = next(ln for ln in lines if ln.split()[0] not in ("Experiment", "├──", "└──") and "─" not in ln)
    assert "gemma3-270m" in baseline  # the default's probed model, beside $M's
    rows = {n: next(ln for ln in lines if f"[exp-{n}]" in ln).split() for n in experiments}
    col = {c: header.index(c) - len(header) for c in ("labels.name", "protocol.name", "prompt.name")}
    base = {"labels.name": "latin", "protocol.name": "sl", "prompt.name": "original"}
    changed = {"labels": ("labels.name", "cyrillic"), "protocol": ("protocol.name", "md"),
               "prompt": ("prompt.name", "minimal")}  # fmt: skip
    for name, row in rows.items():
        assert row[header.index("model.name") - len(header)] == "longest"
        want = base | dict([changed[name]])
        assert {c: row[i] for c, i in col.items()} == want, (name, row)
    figures = {n: row[header.index("blind") - len(header)] for n, row in rows.items()}
    assert len(set(figures.values())) == 3  # each row its own headline figures
