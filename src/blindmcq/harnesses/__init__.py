"""The blind probe inside the harnesses researchers already run.

``blindmcq export lm-eval|inspect BANK --out DIR`` writes the probe's presentations (blind over the 2N
orders, full, forced placement; the phrasing, labels and orders a config names, rendered by
``blindmcq.tasks.presentations`` exactly as ``blindmcq.tasks.probe`` renders them) as an
lm-evaluation-harness task or an inspect_ai task. ``blindmcq import lm-eval SAMPLES.jsonl`` and
``blindmcq import inspect LOG`` turn the harness's answers back into blindmcq's predictions format, so the
gate, the analysis, the report and the audit report read them as any probe's.

- ``documents``: presentations <-> the plain documents both harnesses carry (one per call);
- ``lm_eval``: the task YAML and data file, and the ``--log_samples`` reader;
- ``inspect_task``: the dataset and task file, and the ``.eval`` log reader;
- ``inspect_solver``: the multiple-choice solver the exported inspect task runs (imports inspect_ai);
- ``export`` / ``importing``: the two command lines.

lm-eval and inspect_ai are an optional extra (``pip install blindmcq[harnesses]``): only the readers of
their logs and the solver import them, and only when called.
"""
