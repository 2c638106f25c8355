"""Tests of a setting against literal values (`if training_args.bits in [4, 8]:`), read
back from a pending guard's evidence (the test's own code) so that the project's declared
default (`bits: int = field(default=16)` in another module) can decide it: a side that
holds only when the setting is changed from its default is an option, not the main path.

The evidence is parsed as an expression and read by `options.compared_setting`, the same
reading the walk gave the test; nothing of the scanned code runs. Anything but one
comparison of a name or attribute with literals reads as None, which leaves the finding
at its full weight.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from tpucheck.analyze.python.options import compared_setting as _compared

Compared = tuple[str, Callable[[str], bool]]
"""The setting's name and whether the test holds when the setting has a given default
(literal code, as `ImportFacts.options` writes it)."""


def compared_setting(evidence: str) -> Compared | None:
    """`training_args.bits in [4, 8]` -> ("bits", holds); None for any other test."""
    code = evidence.split(";")[0].strip().strip("`").strip().removesuffix(":")
    try:
        test = cst.parse_expression(code)
    except (cst.ParserSyntaxError, ValueError, RecursionError):
        return None
    return _compared(test)
