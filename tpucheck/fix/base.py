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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, TypeVar, cast

import libcst as cst
from libcst.metadata import (
    Assignment,
    CodeRange,
    GlobalScope,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    Scope,
    ScopeProvider,
)

from tpucheck.findings import Finding
from tpucheck.fix.imports import add_local_import
from tpucheck.fix.imports import dotted as _dotted
from tpucheck.fix.versions import Version

__all__ = ["FIXED", "MANUAL", "PINNED", "REWRITTEN", "UNSAFE", "Codemod", "Edit", "FileFix", "Outcome", "Target"]

CSTNodeT = TypeVar("CSTNodeT", bound=cst.CSTNode)


@dataclass(frozen=True, slots=True)
class Target:
    """One finding a codemod may fix, placed in the module being fixed (libcst's
    coordinates: 1-based lines, 0-based columns)."""

    finding: Finding
    codemod: str
    start: tuple[int, int]
    end: tuple[int, int]
    safe: bool = True
    """Whether the rule calls its codemod safe (`codemod: {safe: true}`); an unsafe rule's
    edits are all made only with `--unsafe-fixes`."""

    @classmethod
    def of(cls, finding: Finding, codemod: str, *, safe: bool = True) -> Target:
        span = finding.span
        return cls(finding, codemod, (span.line, span.column - 1), (span.end_line, span.end_column - 1), safe)


FIXED = "fixed"
"""The edit is made and the finding goes."""
REWRITTEN = "rewritten"
"""The edit is made, and the finding stays by design (a deprecated name renamed)."""
UNSAFE = "unsafe"
"""An edit exists but may change behaviour: made only with `--unsafe-fixes`."""
PINNED = "pinned"
"""An edit exists but needs a newer torch than the file's manifest allows."""
MANUAL = "manual"
"""No edit: a person fixes it."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one finding: fixed (and how), rewritten, held back, or left (and why)."""

    target: Target
    state: str
    """FIXED, REWRITTEN, UNSAFE, PINNED or MANUAL."""
    note: str
    needs: Version | None = None
    """The torch version the rewritten code needs, when it needs a recent one."""
    uses: str | None = None
    """The API that needs it (`torch.accelerator.empty_cache`)."""
    source: str | None = None
    """For PINNED: the manifest line that holds the fix back."""

    @property
    def fixed(self) -> bool:
        return self.state == FIXED

    @property
    def edited(self) -> bool:
        """Whether the diff changes the code for this finding."""
        return self.state in (FIXED, REWRITTEN)


@dataclass(frozen=True, slots=True)
class Edit:
    """A codemod's replacement for one node, and the findings it settles."""

    node: cst.CSTNode | cst.RemovalSentinel
    targets: tuple[Target, ...]
    note: str
    needs: Version | None = None
    uses: str | None = None
    unsafe: str | None = None
    """Why this edit may change behaviour on the machines the code runs on today (CUDA,
    CPU-only torch, another accelerator it supports); None: it cannot."""
    keeps_finding: bool = False
    """The edit is made but the finding stays (a rename that leaves the rule's concern)."""


@dataclass(slots=True)
class FileFix:
    """The state of fixing one module: its targets, the options, and what happened."""

    targets: list[Target]
    unsafe: bool = False
    torch_pin: Version | None = None
    """The newest torch the file's nearest manifest allows (None: no upper bound)."""
    pin_source: str | None = None
    """Where that bound is written, for the message."""
    torch_floor: Version | None = None
    """The oldest torch that manifest says the code supports (`torch>=2.1`), if it says."""
    floor_source: str | None = None
    module: cst.Module | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    taken: set[Target] = field(default_factory=set)
    torch_name: str | None = None
    """The name torch is bound to outside this code (a notebook's earlier cell)."""
    resolver: cst.MetadataDependent | None = None
    """The traversal, whose metadata (positions, parents, scopes, names) the helpers read."""
    at: cst.CSTNode | None = None
    """The original node the codemods are looking at."""
    import_torch: set[cst.CSTNode] = field(default_factory=set)
    """Where `import torch` must be added: the module, or a function (whose original node)."""
    local_torch: bool = False
    """Whether the module imports torch only inside functions (then a function gets its own)."""
    other_accelerator: str | None = None
    """Another accelerator the project's code names (`"mps" (train.py)`): a check made
    accelerator-generic would change what the code does there."""

    # --------------------------------------------------------------- metadata

    def position(self, node: cst.CSTNode) -> CodeRange | None:
        return self.resolver.get_metadata(PositionProvider, node, None) if self.resolver is not None else None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.resolver.get_metadata(ParentNodeProvider, node, None) if self.resolver is not None else None

    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self.resolver.get_metadata(ScopeProvider, node, None) if self.resolver is not None else None

    def code(self, node: cst.CSTNode) -> str:
        return (self.module or _EMPTY).code_for_node(node)

    # --------------------------------------------------------------- finding <-> node

    def _span(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]] | None:
        where = self.position(node)
        return None if where is None else ((where.start.line, where.start.column), (where.end.line, where.end.column))

    def take(self, codemod: str, node: cst.CSTNode, *, any_start: bool = False) -> Target | None:
        """The untaken target of `codemod` that `node` (an original node) carries, marked
        taken; None when the node carries none. `any_start`: a target anywhere inside
        the node that ends where it ends (a statement whose call is the finding)."""
        span = self._span(node)
        if span is None:
            return None
        start, end = span
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
        first, last = self._span(arg.keyword), self._span(arg.value)
        if first is None or last is None:
            return None
        start, end = first[0], last[1]
        for target in self.targets:
            if target.codemod == codemod and target not in self.taken and target.start == start and target.end == end:
                self.taken.add(target)
                return target
        return None

    def carries(self, codemod: str, node: cst.CSTNode) -> bool:
        """Whether `node` carries an untaken target of `codemod`, without taking it."""
        span = self._span(node)
        if span is None:
            return False
        start, end = span
        return any(t.codemod == codemod and t not in self.taken and t.end == end and start <= t.start for t in self.targets)

    def end_of(self, node: cst.CSTNode) -> tuple[int, int] | None:
        span = self._span(node)
        return None if span is None else span[1]

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """The qualified names an original Name/Attribute/Call refers to (`cuda.synchronize`
        after `from torch import cuda` is `torch.cuda.synchronize`)."""
        names = self.resolver.get_metadata(QualifiedNameProvider, node, None) if self.resolver is not None else None
        if names:
            return {q.name for q in names}
        # a name bound outside this code (a notebook's earlier cell): read it as written
        spelled = _dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else ""
        if self.torch_name and self.torch_name != "torch" and spelled.startswith(self.torch_name + "."):
            spelled = "torch." + spelled[len(self.torch_name) + 1 :]
        return {spelled} if spelled.startswith("torch.") else set()

    def start_line(self, node: cst.CSTNode) -> int | None:
        span = self._span(node)
        return None if span is None else span[0][0]

    def in_call_argument(self, node: cst.CSTNode) -> bool:
        """Whether `node` is passed where a device is meant: `device=` or `map_location=`,
        or the first argument of `.to(...)`."""
        parent = self.parent(node)
        if not isinstance(parent, cst.Arg):
            return False
        if parent.keyword is not None:
            return parent.keyword.value in ("device", "map_location")
        call = self.parent(parent)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and call.args[0] is parent

    def under_cuda_check(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs only when CUDA is there: in the true branch of an `if` or a
        conditional expression whose test asks `is_available()` or `.is_cuda` (a guard
        the scan marked as such; a try/except ImportError guard says nothing about the
        device, so it does not count)."""
        if self.module is None:
            return False
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, (cst.IfExp, cst.If)) and child is parent.body:
                test = self.module.code_for_node(parent.test)
                if ("is_available" in test or "is_cuda" in test) and "not " not in test:
                    return True
            child, parent = parent, self.parent(parent)
        return False

    # --------------------------------------------------------------- outcomes

    def skip(self, target: Target, reason: str) -> None:
        self.outcomes.append(Outcome(target, MANUAL, reason))

    def allows(self, needs: Version | None) -> bool:
        """Whether the file's torch pin allows code that needs `needs`."""
        return needs is None or self.torch_pin is None or self.torch_pin >= needs

    def supported_floor(self, needs: Version | None) -> str | None:
        """Why code that needs `needs` would break a torch the manifest says it supports
        (`torch>=2.1` and the fix needs 2.6), or None."""
        if needs is None or self.torch_floor is None or self.torch_floor >= needs:
            return None
        return f"needs torch>={needs}, and {self.floor_source or 'the manifest'} supports older torch"

    def skip_pinned(self, target: Target, needs: Version, what: str) -> None:
        """Not fixed because the file's torch pin is older than `what` (an API) needs."""
        where = self.pin_source or f"torch<={self.torch_pin}"
        note = f"{what} needs torch>={needs}, newer than the project allows ({where}): raise the pin, then run tpucheck fix again"
        self.outcomes.append(Outcome(target, PINNED, note, needs, what, self.pin_source))

    # --------------------------------------------------------------- building code

    def torch(self, attribute: str = "") -> cst.BaseExpression:
        """`torch.<attribute>` spelled with the name torch has where the codemod is looking
        (`T.accelerator` after `import torch as T`, a function's own `import torch`); asks
        for `import torch` in the right scope when nothing binds it there."""
        name = self._torch_name()
        return cst.parse_expression(f"{name}.{attribute}" if attribute else name)

    def expression(self, code: str) -> cst.BaseExpression:
        """An expression written with `torch` for the module's torch name."""
        name = self._torch_name()
        return cst.parse_expression(code.replace("torch.", f"{name}.") if name != "torch" else code)

    def _torch_name(self) -> str:
        node = self.at
        scope = self.scope(node) if node is not None else None
        found = torch_binding_in(scope)
        if found is not None:
            return found
        if self.torch_name is not None:
            return self.torch_name
        function = self._function(node) if self.local_torch and node is not None else None
        self.import_torch.add(function if function is not None else (self.module or _EMPTY))
        return "torch"

    def _function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The outermost function around `node`, where a local `import torch` goes."""
        found = None
        parent = self.parent(node)
        while parent is not None:
            if isinstance(parent, cst.FunctionDef):
                found = parent
            parent = self.parent(parent)
        return found


_EMPTY = cst.Module(body=[])


def torch_binding_in(scope: Scope | None) -> str | None:
    """The name bound to the torch package in `scope` or a scope around it (`import torch`,
    `import torch.nn`, `import torch as T`), or None."""
    while scope is not None:
        for assignment in scope.assignments:
            if not isinstance(assignment, Assignment) or not isinstance(assignment.node, cst.Import):
                continue
            for alias in assignment.node.names:
                dotted = _dotted(alias.name)
                bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else dotted.split(".")[0]
                if bound != assignment.name:
                    continue
                if (alias.asname is not None and dotted == "torch") or (alias.asname is None and dotted.split(".")[0] == "torch"):
                    return bound
        if isinstance(scope, GlobalScope):
            return None
        scope = scope.parent
    return None


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


def imports_torch_locally(module: cst.Module) -> bool:
    """Whether the module binds torch only inside functions (`def f(): import torch`)."""
    if torch_binding(module) is not None:
        return False
    found = False

    class _Local(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            nonlocal found
            found = found or any(isinstance(s, cst.SimpleStatementLine) and torch_binding(cst.Module(body=[s])) for s in _statements(node.body))

    module.visit(_Local())
    return found


def _statements(block: cst.BaseSuite) -> list[cst.CSTNode]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


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
        self.fix.resolver = self
        self.fix.local_torch = imports_torch_locally(node)
        for codemod in self.codemods:
            codemod.begin(node, self.fix)
        return True

    def on_leave(self, original_node: CSTNodeT, updated_node: CSTNodeT) -> CSTNodeT | cst.RemovalSentinel | cst.FlattenSentinel[CSTNodeT]:
        left = super().on_leave(original_node, updated_node)
        if not isinstance(left, cst.CSTNode):
            return left
        result: cst.CSTNode = self._carry_lines(original_node, left)
        self.fix.at = original_node
        edits = [(codemod, edit) for codemod in self.codemods if (edit := codemod.leave(original_node, result, self.fix)) is not None]
        if isinstance(result, cst.FunctionDef) and original_node in self.fix.import_torch:
            result = add_local_import(result)
        if not edits:
            return cast(CSTNodeT, result)
        if len(edits) > 1:
            names = " and ".join(codemod.name for codemod, _ in edits)
            for _, edit in edits:
                for target in edit.targets:
                    self.fix.skip(target, f"conflict: {names} both rewrite this code; fix it by hand")
            return cast(CSTNodeT, result)
        edit = edits[0][1]
        held = edit.unsafe or self.fix.supported_floor(edit.needs) or next((f"{t.finding.rule}'s fix may change numerics or behaviour" for t in edit.targets if not t.safe), None)
        if held is not None and not self.fix.unsafe:
            for target in edit.targets:
                self.fix.outcomes.append(Outcome(target, UNSAFE, f"unsafe: {held} (would be: {edit.note})", edit.needs, edit.uses))
            return cast(CSTNodeT, result)
        for target in edit.targets:
            state = REWRITTEN if edit.keeps_finding else FIXED
            self.fix.outcomes.append(Outcome(target, state, edit.note + (f" [unsafe: {held}]" if held else ""), edit.needs, edit.uses))
        if isinstance(edit.node, cst.RemovalSentinel) and isinstance(result, cst.SimpleStatementLine) and result.leading_lines:
            # a removed statement's blank lines and comments go to the statement after it
            self.pending[id(self.fix.parent(original_node))] = tuple(result.leading_lines)
        # A codemod may replace a node with one of another type (a call with a name, a
        # statement with an `if`); libcst checks the tree it rebuilds, not this signature.
        return cast(CSTNodeT, edit.node)

    def _carry_lines(self, original: cst.CSTNode, result: cst.CSTNode) -> cst.CSTNode:
        """Give `result` the leading lines of a statement removed just before it."""
        if not self.pending or not isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return result
        lines = self.pending.pop(id(self.fix.parent(original)), None)
        if lines is None:
            return result
        if result.leading_lines:  # blank lines there already: carry only the comments
            lines = tuple(line for line in lines if line.comment is not None)
        return result.with_changes(leading_lines=(*lines, *result.leading_lines))


def leftover(targets: Iterable[Target], fix: FileFix) -> list[Outcome]:
    """Targets no codemod reached: the code has a form the codemod does not rewrite."""
    return [Outcome(t, MANUAL, "not a form this fix rewrites; fix it by hand") for t in targets if t not in fix.taken]
