"""What every codemod shares: the findings it may fix in one module, and how it says what
it did.

A codemod never searches the code for work of its own: it rewrites only nodes that a
finding of its rule points at (the scan already resolved aliases, guards, suppressions
and the baseline), so `tpucheck fix` changes exactly what `tpucheck scan` reported and
nothing a scan did not flag. A finding is tied to a node by position: the node ends where
the finding ends and starts at or before where it starts (a method finding starts at the
method's name, a call's at the callee).

All codemods of a file run in one libcst traversal over the original module, so every
position they see is the scan's; two codemods that want to replace the same node are a
conflict, and neither edit is made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider

from tpucheck.findings import Finding
from tpucheck.fix.versions import Version

__all__ = ["Codemod", "Edit", "FileFix", "Outcome", "Target"]


@dataclass(frozen=True, slots=True)
class Target:
    """One finding a codemod may fix, placed in the module being fixed (libcst's
    coordinates: 1-based lines, 0-based columns)."""

    finding: Finding
    codemod: str
    start: tuple[int, int]
    end: tuple[int, int]

    @classmethod
    def of(cls, finding: Finding, codemod: str) -> Target:
        span = finding.span
        return cls(finding, codemod, (span.line, span.column - 1), (span.end_line, span.end_column - 1))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one finding: fixed (and how), or left (and why)."""

    target: Target
    fixed: bool
    note: str
    needs: Version | None = None
    """The torch version the rewritten code needs, when it needs a recent one."""
    uses: str | None = None
    """The API that needs it (`torch.accelerator.empty_cache`)."""


@dataclass(frozen=True, slots=True)
class Edit:
    """A codemod's replacement for one node, and the findings it settles."""

    node: cst.CSTNode | cst.RemovalSentinel
    targets: tuple[Target, ...]
    note: str
    needs: Version | None = None
    uses: str | None = None


@dataclass(slots=True)
class FileFix:
    """The state of fixing one module: its targets, the options, and what happened."""

    targets: list[Target]
    unsafe: bool = False
    torch_pin: Version | None = None
    """The newest torch the project's manifests allow (None: no upper bound)."""
    pin_source: str | None = None
    """Where that bound is written, for the message."""
    module: cst.Module | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    taken: set[Target] = field(default_factory=set)
    import_torch: bool = False
    """Set when an edit names `torch` and the module binds no name to it."""
    torch_name: str | None = None
    metadata: Callable[[type, cst.CSTNode], object] | None = None
    """The traversal's `get_metadata(provider, node)` (None outside a node's range)."""

    # --------------------------------------------------------------- finding <-> node

    def take(self, codemod: str, node: cst.CSTNode, *, any_start: bool = False) -> Target | None:
        """The untaken target of `codemod` that `node` (an original node) carries, marked
        taken; None when the node carries none. `any_start`: a target anywhere inside
        the node that ends where it ends (a statement whose call is the finding)."""
        where = self._position(node)
        if where is None:
            return None
        start = (where.start.line, where.start.column)  # type: ignore[attr-defined]
        end = (where.end.line, where.end.column)  # type: ignore[attr-defined]
        for target in self.targets:
            if target.codemod != codemod or target in self.taken or target.end != end:
                continue
            if start <= target.start or any_start:
                self.taken.add(target)
                return target
        return None

    def take_keyword(self, codemod: str, arg: cst.Arg) -> Target | None:
        """The untaken target of `codemod` spanning `keyword=value` (keyword findings end
        where the value ends, before the comma)."""
        if arg.keyword is None:
            return None
        first, last = self._position(arg.keyword), self._position(arg.value)
        if first is None or last is None:
            return None
        start = (first.start.line, first.start.column)  # type: ignore[attr-defined]
        end = (last.end.line, last.end.column)  # type: ignore[attr-defined]
        for target in self.targets:
            if target.codemod == codemod and target not in self.taken and target.start == start and target.end == end:
                self.taken.add(target)
                return target
        return None

    def carries(self, codemod: str, node: cst.CSTNode) -> bool:
        """Whether `node` carries an untaken target of `codemod`, without taking it."""
        where = self._position(node)
        if where is None:
            return False
        start = (where.start.line, where.start.column)  # type: ignore[attr-defined]
        end = (where.end.line, where.end.column)  # type: ignore[attr-defined]
        return any(t.codemod == codemod and t not in self.taken and t.end == end and start <= t.start for t in self.targets)

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """The qualified names an original Name/Attribute/Call refers to (`cuda.synchronize`
        after `from torch import cuda` is `torch.cuda.synchronize`)."""
        names = self.metadata(QualifiedNameProvider, node) if self.metadata is not None else None
        if names:
            return {q.name for q in names}  # type: ignore[attr-defined]
        # a name bound outside this code (a notebook's earlier cell): read it as written
        spelled = _dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else ""
        if self.torch_name and self.torch_name != "torch" and spelled.startswith(self.torch_name + "."):
            spelled = "torch." + spelled[len(self.torch_name) + 1 :]
        return {spelled} if spelled.startswith("torch.") else set()

    def start_line(self, node: cst.CSTNode) -> int | None:
        where = self._position(node)
        return where.start.line if where is not None else None  # type: ignore[attr-defined]

    def in_call_argument(self, node: cst.CSTNode) -> bool:
        """Whether `node` is passed where a device is meant: `device=` or `map_location=`,
        or the first argument of `.to(...)`."""
        parent = self.metadata(ParentNodeProvider, node) if self.metadata is not None else None
        if not isinstance(parent, cst.Arg):
            return False
        if parent.keyword is not None:
            return parent.keyword.value in ("device", "map_location")
        call = self.metadata(ParentNodeProvider, parent) if self.metadata is not None else None
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and call.args[0] is parent

    def under_cuda_check(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs only when CUDA is there: in the true branch of an `if` or a
        conditional expression whose test asks `is_available()` or `.is_cuda` (a guard
        the scan marked as such; a try/except ImportError guard says nothing about the
        device, so it does not count)."""
        if self.metadata is None or self.module is None:
            return False
        child, parent = node, self.metadata(ParentNodeProvider, node)
        while isinstance(parent, cst.CSTNode):
            if isinstance(parent, (cst.IfExp, cst.If)) and child is parent.body:
                test = self.module.code_for_node(parent.test)
                if ("is_available" in test or "is_cuda" in test) and "not " not in test:
                    return True
            child, parent = parent, self.metadata(ParentNodeProvider, parent)
        return False

    def _position(self, node: cst.CSTNode) -> object:
        return self.metadata(PositionProvider, node) if self.metadata is not None else None

    # --------------------------------------------------------------- outcomes

    def skip(self, target: Target, reason: str) -> None:
        self.outcomes.append(Outcome(target, False, reason))

    def allows(self, needs: Version | None) -> bool:
        """Whether the project's torch pin allows code that needs `needs`."""
        return needs is None or self.torch_pin is None or self.torch_pin >= needs

    def skip_pinned(self, target: Target, needs: Version, what: str) -> None:
        """Not fixed because the project's torch pin is older than `what` (an API) needs."""
        where = self.pin_source or f"torch<={self.torch_pin}"
        note = f"{what} needs torch>={needs}, newer than the project allows ({where}): raise the pin, then run tpucheck fix again"
        self.outcomes.append(Outcome(target, False, note, needs, what))

    # --------------------------------------------------------------- building code

    def torch(self, attribute: str = "") -> cst.BaseExpression:
        """`torch.<attribute>` spelled with the module's own name for torch (`T.accelerator`
        after `import torch as T`); asks for `import torch` when nothing binds it."""
        if self.torch_name is None:
            self.torch_name = torch_binding(self.module) if self.module is not None else None
            if self.torch_name is None:
                self.torch_name = "torch"
                self.import_torch = True
        return cst.parse_expression(f"{self.torch_name}.{attribute}" if attribute else self.torch_name)

    def expression(self, code: str) -> cst.BaseExpression:
        """An expression written with `torch` for the module's torch name."""
        self.torch()
        name = self.torch_name or "torch"
        return cst.parse_expression(code.replace("torch.", f"{name}.") if name != "torch" else code)


def torch_binding(module: cst.Module) -> str | None:
    """The module-level name bound to the torch package: `import torch` (or `import
    torch.nn`, which binds `torch` too) gives "torch", `import torch as T` gives "T"."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None:
                    if dotted == "torch" and isinstance(alias.asname.name, cst.Name):
                        return alias.asname.name.value
                elif dotted == "torch" or dotted.startswith("torch."):
                    return "torch"
    return None


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def arg_has_comment(arg: cst.Arg) -> bool:
    """Whether removing `arg` would remove a comment (one after its comma, on its line)."""
    return isinstance(arg.comma, cst.Comma) and _has_comment_node(arg.comma)


def _has_comment_node(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Comment) or any(_has_comment_node(child) for child in node.children)


class Codemod:
    """One fix: looks at each node once it has been rebuilt (`updated`, its children
    already fixed) and returns an Edit for the nodes its findings point at."""

    name: ClassVar[str] = ""

    def begin(self, module: cst.Module, fix: FileFix) -> None:
        """Look over the whole (original) module before the pass; positions are ready."""

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        raise NotImplementedError


class Dispatch(cst.CSTTransformer):
    """Runs every codemod on every node in one pass over the original module."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, codemods: Sequence[Codemod], fix: FileFix) -> None:
        super().__init__()
        self.codemods = codemods
        self.fix = fix
        self.pending: dict[int, tuple[cst.EmptyLine, ...]] = {}
        """Leading lines of removed statements, by the id of their block."""

    def visit_Module(self, node: cst.Module) -> bool:
        self.fix.module = node
        self.fix.metadata = lambda provider, node: self.get_metadata(provider, node, None)
        for codemod in self.codemods:
            codemod.begin(node, self.fix)
        return True

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        result = super().on_leave(original_node, updated_node)
        if not isinstance(result, cst.CSTNode):
            return result
        result = self._carry_lines(original_node, result)
        edits = [(codemod, edit) for codemod in self.codemods if (edit := codemod.leave(original_node, result, self.fix)) is not None]
        if not edits:
            return result
        if len(edits) > 1:
            names = " and ".join(codemod.name for codemod, _ in edits)
            for _, edit in edits:
                for target in edit.targets:
                    self.fix.skip(target, f"conflict: {names} both rewrite this code; fix it by hand")
            return result
        edit = edits[0][1]
        for target in edit.targets:
            self.fix.outcomes.append(Outcome(target, True, edit.note, edit.needs, edit.uses))
        if isinstance(edit.node, cst.RemovalSentinel) and isinstance(result, cst.SimpleStatementLine) and result.leading_lines:
            # a removed statement's blank lines and comments go to the statement after it
            self.pending[id(self.get_metadata(ParentNodeProvider, original_node, None))] = tuple(result.leading_lines)
        return edit.node

    def _carry_lines(self, original: cst.CSTNode, result: cst.CSTNode) -> cst.CSTNode:
        """Give `result` the leading lines of a statement removed just before it."""
        if not self.pending or not isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return result
        lines = self.pending.pop(id(self.get_metadata(ParentNodeProvider, original, None)), None)
        if lines is None:
            return result
        if result.leading_lines:  # blank lines there already: carry only the comments
            lines = tuple(line for line in lines if line.comment is not None)
        return result.with_changes(leading_lines=(*lines, *result.leading_lines))


def leftover(targets: Iterable[Target], fix: FileFix) -> list[Outcome]:
    """Targets no codemod reached: the code has a form the codemod does not rewrite."""
    return [Outcome(t, False, "not a form this fix rewrites; fix it by hand") for t in targets if t not in fix.taken]
