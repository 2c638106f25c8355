"""How a module uses names, read with `ast` from its whole source: which names it tests
for presence, which it demands (asserts, raises without), which it reads at all. The
questions behind a `try: import x / except ImportError: x = None`: a placeholder the module
tests keeps a fallback; one it only calls or asserts does not (analyze/python/excepts.py
for the walk, analyze/imports.py for the import graph)."""

from __future__ import annotations

import ast
from collections import Counter
from typing import NamedTuple

__all__ = ["NameUses", "name_uses"]


class NameUses(NamedTuple):
    tested: frozenset[str]
    """Names whose presence the module tests on a path that goes on."""
    loaded: frozenset[str]
    """Names the module reads anywhere (a call, an argument, a return)."""
    tests: Counter[str]
    """How many tests (as `tested`) name each name."""
    demands: Counter[str]
    """How many asserts and `if ...: raise` tests name each name: places that need it."""

    def demanded(self, names: frozenset[str]) -> bool:
        """The module asks for these names in more places than it lets them be absent:
        most of what it does needs the import (svox2: thirteen `assert _C is not None`
        against two renderers that test it)."""
        return sum(self.demands[n] for n in names) > sum(self.tests[n] for n in names)


def name_uses(source: str) -> NameUses:
    """How the module uses names, for `placeholders`: `tested` holds the test of an `if`,
    `while` or conditional expression (`if fn is None:`, `fn if fn else ref`), an operand of
    `and`/`or`, a comparison with None, `callable(fn)`. An `assert fn is not None` and an
    `if fn is None: raise ...` only demand the import, so they are no test.

    Read with `ast` from the whole source: the walk's tree may have function bodies
    hollowed by the screen, and CPython's parser is the fast one."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return NameUses(frozenset(), frozenset(), Counter(), Counter())
    tested: set[tuple[str, int, int]] = set()  # each tested name at its place, counted once
    demanded: set[tuple[str, int, int]] = set()
    loaded: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.add(node.id)
            continue
        demand = node.test if isinstance(node, ast.Assert) or (isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Raise)) else None
        if demand is not None:  # read, never tested
            named = [n for n in ast.walk(demand) if isinstance(n, ast.Name)]
            loaded.update(n.id for n in named)
            demanded.update((n.id, n.lineno, n.col_offset) for n in named)
            stack.extend(c for c in ast.iter_child_nodes(node) if c is not demand)
            continue
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            _truth_names(node.test, tested)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                _truth_names(value, tested)
        elif isinstance(node, ast.Compare):
            _truth_names(node, tested)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "callable" and node.args:
            _truth_names(node.args[0], tested)
        stack.extend(ast.iter_child_nodes(node))
    return NameUses(frozenset(name for name, _, _ in tested), frozenset(loaded), Counter(name for name, _, _ in tested), Counter(name for name, _, _ in demanded))


def _truth_names(test: ast.expr, found: set[tuple[str, int, int]]) -> None:
    if isinstance(test, ast.Name):
        found.add((test.id, test.lineno, test.col_offset))
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _truth_names(test.operand, found)
    elif isinstance(test, ast.BoolOp):
        for value in test.values:
            _truth_names(value, found)
    elif isinstance(test, ast.Compare) and any(isinstance(c, ast.Constant) and c.value is None for c in test.comparators):
        _truth_names(test.left, found)
