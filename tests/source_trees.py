"""Parsed Python source for the tests that read the package's code (layout, config reads, dependencies).

Each of those checks parsed and walked every module of the package again (a CPU-second or two a test);
here a text is parsed, and a node walked, once per test process. The checks only read the trees."""

from __future__ import annotations

import ast
import functools


@functools.cache
def parse_source(source: str) -> ast.Module:
    """``ast.parse(source)``, once per distinct text; the tree is shared, so callers must not change it."""
    return ast.parse(source)


@functools.cache
def walk(node: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(node)`` as a tuple (the same nodes in the same order), listed once per node."""
    return tuple(ast.walk(node))
