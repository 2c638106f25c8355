"""Python text read with CPython's `ast`, or nothing: the tree-level analyses (kernel
choices, except fallbacks, bindings, JIT builds, availability checks) skip a file they
cannot parse, and one place says what "cannot parse" means."""

from __future__ import annotations

import ast

__all__ = ["last_name", "parse_or_none"]


def parse_or_none(text: str) -> ast.Module | None:
    """The module, or None for text CPython's parser rejects (a syntax error, a NUL byte,
    nesting too deep for it, or a file too large to hold)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def last_name(node: ast.AST) -> str:
    """The last part of a name or attribute chain (`logger.info` -> `info`, `gradcheck`
    -> `gradcheck`); "" for any other expression."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"`: the test of a module's main block."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
