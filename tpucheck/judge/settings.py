"""Tests of a setting against literal values (`if training_args.bits in [4, 8]:`), read
back from a pending guard's evidence (the test's own code) so that the project's declared
default (`bits: int = field(default=16)` in another module) can decide it: a side that
holds only when the setting is changed from its default is an option, not the main path.

Parsed with `ast` and evaluated with `ast.literal_eval` only: nothing of the scanned code
runs. Anything but one comparison of a name or attribute with literals reads as None,
which leaves the finding at its full weight.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

Compared = tuple[str, Callable[[str], bool]]
"""The setting's name and whether the test holds when the setting has a given default
(literal code, as `ImportFacts.options` writes it)."""


def compared_setting(evidence: str) -> Compared | None:
    """`training_args.bits in [4, 8]` -> ("bits", holds); None for any other test."""
    code = evidence.split(";")[0].strip().strip("`").strip().removesuffix(":")
    try:
        test = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    name = _setting(test.left)
    try:
        value = ast.literal_eval(test.comparators[0])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if name is None or value is None:
        return None
    op = test.ops[0]
    if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(value, (list, tuple, set, frozenset)):
        return None
    if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        return None

    def holds(default: str) -> bool:
        try:
            current = ast.literal_eval(default)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return True  # a default we cannot read: the test may hold, the weight stays
        if isinstance(op, ast.Eq):
            return bool(current == value)
        if isinstance(op, ast.NotEq):
            return bool(current != value)
        if isinstance(op, ast.In):
            return current in value
        return current not in value

    return name, holds


def _setting(node: ast.expr) -> str | None:
    """The setting a name or a short attribute chain reads (`args.bits`, `cfg.model.bits`)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or len(parts) > 2:
        return None
    return parts[0] if parts else node.id
