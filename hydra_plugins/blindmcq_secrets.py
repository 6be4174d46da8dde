"""Resolvers for DVC's Hydra composition (``dvc exp run -S``), found by Hydra's plugin scan: DVC adds
the repository root (``hydra.plugins_path``, default the root) to ``sys.path`` and scans the
``hydra_plugins`` namespace before it composes ``conf/`` into ``params.yaml``.

* ``${secret:NAME}`` (the safe route) resolves to the reference ``secret-env://NAME``, never to the
  value: ``params.yaml``, ``dvc.lock``, the experiment's git refs and the queue's stash hold the
  reference, and the value is read from the environment only when a stage loads its params
  (``blindmcq.params.load_params`` -> ``blindmcq.secrets.resolve_secret_refs``), where the calls are made.
* ``${oc.env:NAME}`` while DVC composes (the unsafe route: DVC would resolve it and write the value into
  ``params.yaml`` and git) fails with one line naming the key and the safe route, before anything is
  written; variables of the allow list (``blindmcq.secrets.ENV_ALLOW``) still resolve. Outside DVC (a
  sweep, ``blindmcq preview``) ``oc.env`` is left alone (the sweep scrubs such values by value).

Documented in docs/config.md ("Secrets in dvc exp run").
"""

from __future__ import annotations

import os
import sys
from typing import Any

from omegaconf import OmegaConf

REF_PREFIX = "secret-env://"
try:  # the allow list lives with the scrubber; this module must also load where blindmcq does not
    from blindmcq.secrets import ENV_ALLOW
except ImportError:  # pragma: no cover
    ENV_ALLOW = frozenset({"HOME", "USER", "PWD", "TMPDIR", "AWS_REGION", "AWS_DEFAULT_REGION"})


class SecretInParams(SystemExit):
    """``${oc.env:...}`` in a config that DVC is about to write into params.yaml: exit 2, after its one
    line on stderr. A SystemExit, so that neither OmegaConf (which wraps an ``Exception``) nor DVC
    (which answers one with "unexpected error" and exit 255) turns it into something else; DVC undoes
    its stash and reset in ``finally`` blocks, which still run."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


def secret_ref(name: str) -> str:
    """``${secret:NAME}``: a reference to the variable, resolved when a stage loads its params."""
    if not str(name).replace("_", "").isalnum():
        raise ValueError(f"${{secret:{name}}}: expected an environment variable name")
    return f"{REF_PREFIX}{name}"


def _refusing_env(key: str, default: Any = None, *, _node_: Any = None) -> Any:
    if str(key) in ENV_ALLOW:
        value = os.environ.get(str(key))
        return value if value is not None else default
    where = _node_._get_full_key(None) if _node_ is not None else "a config value"
    refused = SecretInParams(
        f"{where}: ${{oc.env:{key}}} would write the variable's value into params.yaml (and git); "
        f"use ${{secret:{key}}}, read from the environment only when the stage runs (docs/config.md)"
    )
    print(f"blindmcq: error: {refused}", file=sys.stderr, flush=True)
    raise refused


OmegaConf.register_new_resolver("secret", secret_ref, replace=True)
if "dvc.utils.hydra" in sys.modules:  # DVC is composing params.yaml: the unsafe route stops here
    OmegaConf.register_new_resolver("oc.env", _refusing_env, replace=True, use_cache=False)
