"""The edge between the composed config (``params.yaml``) and the core, shared by the stages and the
sweep: :mod:`~blindmcq.wiring.probe` (the probe of a sample, the panel) and :mod:`~blindmcq.wiring.runs`
(the headline presentation, a run's name, tracking)."""
