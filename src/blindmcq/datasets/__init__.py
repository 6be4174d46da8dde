"""Bank loaders behind one interface: :func:`load_dataset` (``cfg["loader"]`` picks the loader).

Loaders: ``customs`` (State Customs Service bank, JSON), ``lexam`` (LEXam workbooks), ``generic``
(CSV/JSONL/Parquet with a column mapping), ``items`` (an existing ``items.jsonl``), ``nonsense``
(NonsenseQA generator) and ``pdf`` (the Commission's PDF tables via :mod:`blindmcq.corpus`).
"""

from blindmcq.datasets.registry import LOADERS, load_dataset

__all__ = ["LOADERS", "load_dataset"]
