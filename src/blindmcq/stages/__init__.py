"""Thin DVC stage entry points: ``python -m blindmcq.stages.<stage>`` reads params.yaml, calls the core."""
