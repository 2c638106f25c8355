"""Positions for the few nodes that matched, without libcst's PositionProvider.

PositionProvider records a range for every node of the module (about twice the cost
of the parse). We need ranges for a handful of nodes, and only in files that matched.
This runs the same code generation libcst uses, but counts lines only when a wanted
node starts or ends, and stops as soon as the last wanted node has ended, so the cost is
at most one plain codegen of the module and the ranges are identical to
PositionProvider's.
"""

from __future__ import annotations

from types import TracebackType

import libcst as cst
from libcst._nodes.internal import CodegenState

Range = tuple[int, int, int, int]
"""line, column, end line, end column: 1-based lines, 0-based columns, end exclusive."""


class _Done(Exception):
    """Every wanted node has its range: the rest of the module need not be generated."""


class _Untracked:
    """The context manager for the many nodes whose position nobody asked for.

    libcst enters `record_syntactic_position` for most statements and expressions; a
    generator-based context manager there cost more than the whole codegen of the node.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        return None


_UNTRACKED = _Untracked()


class _Tracked:
    """Records a wanted node's syntactic range (without its leading lines and comments)."""

    __slots__ = ("node", "start", "state")

    def __init__(self, state: _TargetedState, node: cst.CSTNode) -> None:
        self.state = state
        self.node = node
        self.start = (0, 0)

    def __enter__(self) -> None:
        self.start = self.state._position()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        if kind is None:
            self.state.ranges[id(self.node)] = (*self.start, *self.state._position())


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
            if len(self.ranges) == len(self.targets):
                # A range, once recorded, is final: a syntactic range is recorded before
                # the node's own after_codegen and never overwritten by it, and a node's
                # after_codegen range is recorded once. So nothing left can change them.
                raise _Done

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Untracked | _Tracked:
        if id(node) not in self.targets:
            return _UNTRACKED
        return _Tracked(self, node)


def node_ranges(module: cst.Module, nodes: list[cst.CSTNode]) -> dict[int, Range]:
    """Ranges by `id(node)`, identical to PositionProvider's for these nodes."""
    state = _TargetedState(module, {id(n) for n in nodes})
    try:
        module._codegen(state)
    except _Done:
        pass
    return state.ranges
