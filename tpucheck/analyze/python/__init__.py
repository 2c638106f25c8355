"""The Python analyzer (source.py): prefilter and screen, one libcst parse, one batched
walk, targeted positions.

The analyzer and libcst are imported on first use of one of their names: a rescan whose
results all come from the cache, or `tpucheck --version`, never needs them. The index
(the rules' lookup tables) is light and imported at once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tpucheck.analyze.python.index import PythonIndex, build_python_index

if TYPE_CHECKING:
    from tpucheck.analyze.python.nesting import MAX_BRACKET_DEPTH, MAX_EXPRESSION_DEPTH, bracket_depth
    from tpucheck.analyze.python.source import (
        ParseFailure,
        PythonAnalysis,
        analyze_source,
        find_suppressions,
        parse_python,
    )

__all__ = [
    "MAX_BRACKET_DEPTH",
    "MAX_EXPRESSION_DEPTH",
    "ParseFailure",
    "PythonAnalysis",
    "PythonIndex",
    "analyze_source",
    "bracket_depth",
    "build_python_index",
    "find_suppressions",
    "parse_python",
]

_LAZY = {
    "MAX_BRACKET_DEPTH": "nesting",
    "MAX_EXPRESSION_DEPTH": "nesting",
    "bracket_depth": "nesting",
    "ParseFailure": "source",
    "PythonAnalysis": "source",
    "analyze_source": "source",
    "find_suppressions": "source",
    "parse_python": "source",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
