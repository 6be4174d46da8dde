"""Embedder loading: errors that name the config key."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from blindmcq.errors import ConfigError
from blindmcq.protocols.embeddings import SentenceTransformerEmbedder, load_embedder


def test_missing_model_path_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"protocol\.embedder.*no embedding model"):
        load_embedder(str(tmp_path / "Qwen3-Embedding-0.6B"))


def test_missing_sentence_transformers_names_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("sentence_transformers"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ConfigError, match=r"protocol\.embedder.*sentence-transformers"):
        SentenceTransformerEmbedder(tmp_path)


@pytest.mark.parametrize("spec", ["", "  ", None])
def test_empty_spec_is_refused(spec: object) -> None:
    with pytest.raises(ConfigError, match=r"protocol\.embedder"):
        load_embedder(spec)  # type: ignore[arg-type]
