"""One scrubber for everything this tool writes or logs: MLflow params, tags and artifacts, Hydra's
``.hydra/*.yaml``, logs and reports.

A credential is recognised three ways:
- by its key's name: a word ``secret``, ``token``, ``password``/``passwd``, ``credential(s)``,
  ``apikey``, or a compound ending in ``_key`` (``api_key``, ``aws_secret_access_key``,
  ``private_key``). Plain words stay: ``key`` (a dataset's key column), ``key_slot``, ``model_id``,
  ``k``, ``max_tokens``, ``api_key_env`` (the *name* of a variable, not its value);
- by its value: any value of an environment variable whose name looks secret (so a config value
  resolved with ``${oc.env:MY_API_TOKEN}`` is caught wherever it lands), at least 6 characters long;
- by its value, whatever the variable's name: every value a config resolved from the environment with
  ``${oc.env:NAME}`` (``install_env_resolver`` wraps OmegaConf's ``oc.env`` so each resolved value is
  remembered, ``register_secret``), except the variables of ``ENV_ALLOW`` (docs/config.md), and the
  value of a model's ``api_key_env`` variable;
- by its shape: an AWS access key id (``AKIA``/``ASIA`` and 16 more capitals or digits), an
  ``Authorization: Bearer`` token and an OpenAI/Anthropic-style key (``sk-...``), as a provider's error
  body may echo them.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REDACTED = "***"
SECRET_WORDS = {"secret", "token", "password", "passwd", "credential", "credentials", "apikey", "passphrase"}
AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")
# an echoed credential in a provider's error body: "Bearer <token>", "sk-..." / "sk-proj-..." keys
BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{8,}")
API_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")
# Environment variables whose values are not secret: ``${oc.env:NAME}`` of these is not scrubbed.
ENV_ALLOW = frozenset({
    "HOME", "USER", "LOGNAME", "PWD", "TMPDIR", "TMP", "TEMP", "LANG", "TZ", "SHELL", "HOSTNAME",
    "XDG_CACHE_HOME", "XDG_DATA_HOME", "HF_HOME", "TORCH_HOME", "CUDA_VISIBLE_DEVICES",
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "SLURM_JOB_ID", "SLURM_ARRAY_TASK_ID",
    "OMP_NUM_THREADS", "BLINDMCQ_CONF", "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME",
})  # fmt: skip
_REGISTERED: set[str] = set()  # values resolved from the environment in this process
# the last secret_values answer for os.environ, with what it was computed from: scrubbing runs on every
# response (and every cached row read back), so the values are recomputed only when a secret is
# registered or a secret-named variable changes, not per response or per string
_VALUES_MEMO: tuple[tuple[int, Any], tuple[str, ...]] | None = None
_MISSING = object()
MIN_SECRET_LEN = 6  # shorter env values ("1", "true") would redact ordinary text
TEXT_SUFFIXES = {".yaml", ".yml", ".json", ".log", ".txt", ".md", ".csv", ".html", ".tsv", ".jsonl"}
# Files the tool writes from data (the report's page, tables, rows): key-shaped text there is data (the
# model "gemma3-270m-cloze-token", the explorer's data-key="id"), so only values and credential shapes
# are scrubbed; the key = value rule would corrupt them.
DATA_SUFFIXES = {".html", ".csv", ".tsv", ".jsonl"}
MAX_SCRUB_BYTES = 50 * 2**20
# key = value / key: value / key=value in YAML, override lists, logs; the value up to a delimiter.
# Only the key and separator are matched, so a value holding another assignment (Hydra's
# ``override_dirname: +model.api_key=...``) is scanned too.
_KEY_SEP = re.compile(r"""([A-Za-z0-9_\-]+)(["']?\s*[:=]\s*)""")
_VALUE = re.compile(r"""\\?("[^"\n]*"|'[^'\n]*'|[^\s,'"}\]\n]+)""")


def is_secret_key(name: object) -> bool:
    """Whether a config key, tag or variable name names a credential (see module docstring)."""
    words = [w for w in re.split(r"[_\-.\s]+", str(name).casefold()) if w]
    if not words or str(name).casefold().startswith("data-"):
        return False  # an HTML data-* attribute (the explorer's data-key="id") names a page field
    if any(w in SECRET_WORDS for w in words):
        return True
    return len(words) > 1 and words[-1] == "key"  # api_key, secret_key, aws_secret_access_key


def register_secret(value: object) -> None:
    """Treat ``value`` as a credential from now on in this process (scrubbed by value wherever it lands).
    Values shorter than ``MIN_SECRET_LEN`` are not registered (they would redact ordinary text)."""
    if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LEN:
        _REGISTERED.add(value)  # a new value changes len(_REGISTERED), so the memo is recomputed


def install_env_resolver() -> None:
    """Wrap OmegaConf's ``oc.env`` so that every value it resolves (outside ``ENV_ALLOW``) is a secret
    of this process. Idempotent; call before a config is resolved."""
    from omegaconf import OmegaConf
    from omegaconf.resolvers import oc

    def env(key: str, default: Any = _MISSING) -> Any:
        value = oc.env(key) if default is _MISSING else oc.env(key, default)
        if str(key) not in ENV_ALLOW:
            register_secret(value)
        return value

    env.__blindmcq__ = True  # type: ignore[attr-defined]
    OmegaConf.register_new_resolver("oc.env", env, replace=True, use_cache=False)
    # ${secret:NAME}, as under DVC (hydra_plugins/blindmcq_secrets.py): a reference, read where used
    OmegaConf.register_new_resolver("secret", lambda name: f"secret-env://{name}", replace=True)


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    return is_secret_key(name)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret, and every value registered
    (``register_secret``: resolved from the environment), longest first."""
    return list(_values(environ))


def _values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    global _VALUES_MEMO
    if environ is None:
        # os.environ's raw (bytes) mapping, compared as one dict in C: decoding every name per response
        # cost more than the scrubbing itself; where a Python has no such mapping, the names are read
        raw = getattr(os.environ, "_data", None)
        memo = _VALUES_MEMO
        if memo is not None and raw is not None and memo[0] == (len(_REGISTERED), raw):
            return memo[1]
    env = os.environ if environ is None else environ
    # by key, read once each: another thread (MLflow's telemetry) may delete a variable meanwhile,
    # and iterating os.environ.items() then raises KeyError
    named = tuple((k, env.get(k)) for k in list(env) if _secret_name(k))
    if environ is not None:
        return _sorted_values(named)
    values = _sorted_values(named)
    snapshot = dict(raw) if raw is not None else None  # a copy: os.environ changes its own in place
    _VALUES_MEMO = ((len(_REGISTERED), snapshot), values)  # _REGISTERED only grows: its size says if it did
    return values


def _sorted_values(named: tuple[tuple[str, str | None], ...]) -> tuple[str, ...]:
    values = {v for _, v in named if v is not None and len(v.strip()) >= MIN_SECRET_LEN}
    return tuple(sorted(values | _REGISTERED, key=len, reverse=True))


def scrub_text(text: str, environ: Mapping[str, str] | None = None, *, assignments: bool = True) -> str:
    """``text`` with every recognised credential replaced by ``***``; ``assignments=False`` leaves
    ``secret_key: word`` alone (for error messages, which name a key and never echo its value)."""
    return _scrub(text, _values(environ), assignments)


def _scrub(text: str, values: tuple[str, ...], assignments: bool) -> str:
    for value in values:
        text = text.replace(value, REDACTED)
    # each shape only where its fixed part occurs: a plain substring test is far cheaper than a regex pass
    if "AKIA" in text or "ASIA" in text:
        text = AWS_KEY_ID.sub(REDACTED, text)
    if "sk-" in text:
        text = API_KEY_SHAPE.sub(REDACTED, text)
    text = BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    if not assignments:
        return text

    out, pos = [], 0
    for match in _KEY_SEP.finditer(text):
        if match.start() < pos or not is_secret_key(match.group(1)):
            continue
        value = _VALUE.match(text, match.end())
        if value is None or value.group(0) == REDACTED:
            continue
        out += [text[pos : match.end()], REDACTED]
        pos = value.end()
    return "".join(out) + text[pos:]


SECRET_REF = re.compile(r"secret-env://([A-Za-z_][A-Za-z0-9_]*)")


def resolve_secret_refs(value: Any, environ: Mapping[str, str] | None = None, key: str = "") -> Any:
    """``value`` (a config) with every ``secret-env://NAME`` reference (what ``${secret:NAME}`` leaves in
    ``params.yaml``, hydra_plugins/blindmcq_secrets.py) replaced by the variable's value, each value
    registered as a secret (scrubbed wherever it lands). An unset variable is a ConfigError naming the key."""
    env = os.environ if environ is None else environ
    if isinstance(value, Mapping):
        return {k: resolve_secret_refs(v, env, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(resolve_secret_refs(v, env, f"{key}[{i}]") for i, v in enumerate(value))
    if not isinstance(value, str) or "secret-env://" not in value:
        return value

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            from blindmcq.errors import ConfigError

            raise ConfigError(key or "config", f"secret-env://{name}: environment variable {name} is not set")
        register_secret(env[name])
        return env[name]

    return SECRET_REF.sub(one, value)


def scrub_response(response: Any) -> Any:
    """A model response with every text it carries scrubbed by value and shape, in place: the answer
    (a model may echo its prompt, and a prompt may hold a ``${secret:}`` value), the error (a provider's
    401 body may echo the key) and every string in ``meta`` (the provider message copied from it, a
    reasoning trace). These go to the cache, the predictions' ``raw_response`` and ``error`` columns,
    every output derived from them, MLflow and a release. Returns the response.

    The secret values are looked up once per response (and recomputed only when they changed), since this
    runs on every answer and every cached row read back."""
    values = _values()
    if isinstance(getattr(response, "text", None), str):
        response.text = _scrub(response.text, values, assignments=False)
    if getattr(response, "error", None):
        response.error = _scrub(response.error, values, assignments=True)
    meta = getattr(response, "meta", None)
    if isinstance(meta, dict):
        response.meta = _scrub_strings(meta, values)
    return response


ERROR_FIELDS = frozenset({"provider_message", "error_message"})  # error text: key = value scrubbed too


def _scrub_strings(value: Any, values: tuple[str, ...], key: object = None) -> Any:
    if isinstance(value, str):
        return _scrub(value, values, assignments=key in ERROR_FIELDS)
    if isinstance(value, dict):
        return {k: _scrub_strings(v, values, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_strings(v, values) for v in value]
    return value


def scrub(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """A config (mappings, lists, scalars) with secret keys dropped and secret values redacted."""
    if isinstance(value, Mapping):
        return {k: scrub(v, environ) for k, v in value.items() if not is_secret_key(k)}
    if isinstance(value, list | tuple):
        return type(value)(scrub(v, environ) for v in value)
    if isinstance(value, str):
        return scrub_text(value, environ)
    return value


def scrub_file(path: str | Path, environ: Mapping[str, str] | None = None) -> bool:
    """Scrub one text file in place (atomically); True when it changed. Binary files are left alone."""
    from blindmcq.atomic import write_text

    path = Path(path)
    try:
        if path.stat().st_size > MAX_SCRUB_BYTES:
            return False
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    clean = scrub_text(text, environ, assignments=path.suffix.lower() not in DATA_SUFFIXES)
    if clean == text:
        return False
    if path.suffix == ".log":  # rewritten in place: an open logging handler (append mode) keeps writing to it
        with path.open("r+", encoding="utf-8") as fh:
            fh.write(clean)
            fh.truncate()
    else:
        write_text(path, clean)
    return True


def scrub_tree(root: str | Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Scrub every text file under ``root`` (``.hydra/`` included); returns the files changed."""
    root = Path(root)
    if root.is_file():
        return [root] if scrub_file(root, environ) else []
    changed = []
    for path in sorted(root.rglob("*")) if root.exists() else []:
        if path.is_file() and path.suffix.lower() in TEXT_SUFFIXES and scrub_file(path, environ):
            changed.append(path)
    return changed
