"""The engine: requests in, full responses out, through the response cache (``engine.run``,
``engine.cache``). Nothing task-specific lives here."""

from blindmcq.engine.run import Result, run_requests, tally

__all__ = ["Result", "run_requests", "tally"]
