"""Statute corpus, Ukrainian text analysis, BM25 index (rank_bm25-exact) and the lexical-search baseline."""

from blindmcq.statutes.bm25 import BM25Index
from blindmcq.statutes.corpus import Provision, read_provisions
from blindmcq.statutes.index import build_index, build_statute_index, load_statute_index
from blindmcq.statutes.lexical import LexicalSummary, lexical_baseline, lexical_search, summarise
from blindmcq.statutes.text import Analyzer, Lemmatizer, TextConfig, fold_for_search, tokenize

__all__ = [
    "Analyzer",
    "BM25Index",
    "Lemmatizer",
    "LexicalSummary",
    "Provision",
    "TextConfig",
    "build_index",
    "build_statute_index",
    "fold_for_search",
    "lexical_baseline",
    "lexical_search",
    "load_statute_index",
    "read_provisions",
    "summarise",
    "tokenize",
]
