"""The walk itself: traversal, the frame stack, hits, and name resolution.

libcst's own visitor dispatch rebuilds and re-dispatches every node and costs about as
much as the parse; this walker reads dataclass fields directly (about 15x faster) and
dispatches on the exact node type to the handlers rules care about (statements.py for
control flow and bindings, walker.py for expressions). Its state at a node is one
immutable `Frame` (context.py), replaced on entering a branch, loop, function or class
and restored on leaving, always through `enter()`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Set
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar

import libcst as cst

from tpucheck.analyze.python.context import Frame, Guard, RoleMark
from tpucheck.analyze.python.excepts import NameUses
from tpucheck.analyze.python.index import PythonIndex, RuleMatcher
from tpucheck.analyze.python.scope import Scope, dotted
from tpucheck.ruleset.names import GlobTable

_SKIPPED_FIELDS = (
    "whitespace",
    "lpar",
    "rpar",
    "comma",
    "semicolon",
    "leading_lines",
    "lines_after_decorators",
    "footer",
    "header",
    "newline",
    "equal",
    "colon",
    "dot",
    "trailing",
    "asynchronous",
    "default_indent",
    "default_newline",
    "encoding",
    "star",
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type) if not any(skip in f.name for skip in _SKIPPED_FIELDS)
        )
        _FIELDS[node_type] = fields
    return fields


@dataclass(slots=True)
class Hit:
    rule_matcher: RuleMatcher
    node: cst.CSTNode
    guard: Guard | None
    """Why the match keeps a fallback (None: the main path)."""
    detail: str | None = None
    start: cst.CSTNode | None = None
    """Where the span starts when not at `node`: a method call is reported from its name
    (`.cuda()`), not from the start of a long receiver expression."""
    in_loop: bool = False
    functions: tuple[str, ...] = ()
    """Enclosing function names, outermost first."""
    decorators: tuple[str, ...] = ()
    """Resolved decorators of the enclosing functions."""
    guard_test: bool = False
    periodic: bool = False
    role: RoleMark | None = None
    on_host: bool = False
    """A method call whose receiver is known to live on the host (NumPy, `.cpu()`, literals)."""
    report: bool = False
    """In the arguments of a print, warning or log call."""
    default: bool = False
    """In a parameter's default value."""
    output: bool = False
    """In the arguments of a call that makes an image, a plot or audio of its values."""
    fatal: bool = False
    """In a check that stops the program without CUDA (`Frame.fatal`)."""
    copy: bool = False
    """A cast undone at once (`m.half().float()`), made on a copy (`deepcopy(m).half()`) or
    following an operand already in fp16 (`if x.dtype == torch.float16:`): what is computed
    keeps its dtype (`unless: copy`)."""
    scalars: bool = False
    """A keyword of a tensor built from a literal of a few scalars (`torch.tensor([count,
    total], dtype=torch.float64)`): a counter, not data (`Rule.scalars_at_most`)."""
    weights: bool = False
    """A loaded archive the same function reads `state_dict()` from: a container of weights
    for an eager model (`unless: weights`); set after the hit, when the read is met."""

    @property
    def guarded(self) -> bool:
        return self.guard is not None and not self.guard.pending


Handler = Callable[[Any, Any, "str | None"], None]
"""A handler: (walker, node of its type, device context)."""


class _Restore:
    """Puts the frame saved by `enter` back on leaving the `with` block."""

    __slots__ = ("saved", "walker")

    def __init__(self, walker: BaseWalker, saved: Frame) -> None:
        self.walker = walker
        self.saved = saved

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        self.walker.frame = self.saved


class _Unchanged:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        return None


_UNCHANGED = _Unchanged()


class BaseWalker:
    """Traversal, frames, hits and names; the handlers live in the subclasses."""

    HANDLERS: ClassVar[dict[type, Handler]] = {}

    def __init__(self, index: PythonIndex) -> None:
        self.index = index
        self._handlers = self.HANDLERS  # an instance attribute: found without the class lookup
        self.hits: list[Hit] = []
        self.frame = Frame(scope=Scope(), host=set())
        self._device_names = index.device.names
        self.host_functions: set[str] = set()
        """Module-level functions that only return host data."""
        self.copies: set[int] = set()
        """Ids of cast calls whose result is cast back at once or that cast a copy (`Hit.copy`)."""
        self.leaving: set[int] = set()
        """Ids of calls whose result goes to the host at once (`x.double().cpu()`): a widening
        on the way out, no device arithmetic in it (rules with `unless: host`)."""
        self.archives: dict[tuple[tuple[str, ...], str], list[Hit]] = {}
        """(function, name) -> the `unless: weights` hits of the load bound to that name."""
        self.flags: set[str] = set()
        """Names this module sets from an import attempt or an availability check."""
        self.options: dict[str, str] = {}
        """Option names and their literal defaults, as the walk has met them."""
        self.conditional_aliases = False
        """Whether any alias stands for more than one name yet: until then no lookup pays
        for alternatives."""
        self.alias_names: set[str] = set()
        self.alias_guards: dict[str, Guard] = {}
        """Names made an alias inside a branch only CUDA takes (`if torch.cuda.is_available():
        extension = CUDAExtension`), with that branch's guard: a call through the name after
        the branch runs the CUDA binding only where CUDA is (detectron2's setup.py, audit AU)."""
        self.alias_choices: dict[str, cst.IfExp] = {}
        """Names bound to a conditional of two names (`dtype = torch.float16 if c else
        torch.float32`): a match on the name holds on one arm only (`chosen_arm`)."""
        """Every name bound as an alias so far, in any scope: names outside it (nearly all)
        skip the scope walk that asks whether they are one."""
        self._quiet: dict[str, bool] = {}
        self._output: dict[str, bool] = {}
        self.source = ""
        """The text of the module being walked (set by `run`)."""
        self._uses: NameUses | None = None
        """How the module uses names (excepts.name_uses), read on first need."""
        self._test_module: bool | None = None
        """Whether the module imports a test framework (testmarks.py), read on first need."""
        self.counts: set[str] = set()
        """Names this module sets from a CUDA device count (`n = torch.cuda.device_count()`)."""
        self._compared_counts: frozenset[str] | None = None
        self._reads_version = False
        """Whether the module's text reads a `__version__` (statements.py `_version`)."""
        self.skip_flags: set[str] = set()
        """Module-level flags that only skip marks read (testmarks.skip_only_flags)."""
        """Of the names set from a device count, those only compared or reported (counts.py)."""
        self.selected: dict[int, int] = {}
        """Id of an assignment that selects a method (`self.f = self.name`) -> id of that
        method's def, for the methods walked after their class (selected.py)."""
        self.selected_guards: dict[int, list[Guard | None]] = {}
        """Id of such a method's def -> the guards its selecting assignments were under."""
        self.assigned: frozenset[str] | None = None
        """The names the module assigns as `= self.name` (selected.py), read on first need."""
        self.callee: cst.CSTNode | None = None
        """The callee (or decorator) being walked: a name there is claimed by call rules."""

    # -- frames ------------------------------------------------------------------------

    def enter(self, **changes: Any) -> _Restore | _Unchanged:
        """A new frame with these fields changed, for a `with` block; nothing to do when
        none of them changes (most `and`s and `if`s test nothing CUDA)."""
        frame = self.frame
        for key, value in changes.items():
            if getattr(frame, key) is not value:
                self.frame = frame._replace(**changes)
                return _Restore(self, frame)
        return _UNCHANGED

    # -- traversal ---------------------------------------------------------------------

    def walk(self, node: cst.CSTNode, ctx: str | None = None) -> None:
        handler = self._handlers.get(type(node))
        if handler is not None:
            handler(self, node, ctx)
        else:
            self.walk_fields(node)

    def walk_fields(self, node: cst.CSTNode) -> None:
        walk = self.walk
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                walk(value)
            elif type(value) is tuple or type(value) is list:
                for child in value:
                    if isinstance(child, cst.CSTNode):
                        walk(child)

    def walk_all(self, nodes: Any, ctx: str | None = None) -> None:
        for child in nodes:
            self.walk(child, ctx)

    def hit(
        self,
        rule_matcher: RuleMatcher,
        node: cst.CSTNode,
        detail: str | None = None,
        start: cst.CSTNode | None = None,
        *,
        receiver_on_host: bool = False,
        scalars: bool = False,
    ) -> None:
        frame = self.frame
        if (frame.annotation and rule_matcher[1].kind != "call") or (frame.failure and rule_matcher[0].category == "host-sync"):
            return
        guard = frame.guard
        if guard is None and self.alias_guards and isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            guard = self.alias_guards.get(node.func.value)
        rule = rule_matcher[0]
        host_rule = rule.category in self.index.host_categories or rule.unless == "host"
        on_host = (host_rule and ((receiver_on_host and rule_matcher[1].kind == "method") or frame.data_class)) or (
            rule.unless == "host" and id(node) in self.leaving
        )
        self.hits.append(
            Hit(
                rule_matcher, node, guard, detail, start, frame.in_loop, frame.functions, frame.decorators,
                frame.guard_test, frame.periodic, frame.role, on_host, frame.report, frame.default, frame.output, frame.fatal,
                id(node) in self.copies or frame.follows_half, scalars=scalars,
            )
        )

    # -- names (the `Names` view the fact modules read) ---------------------------------

    @property
    def host_names(self) -> Set[str]:
        return self.frame.host

    @property
    def host_fields(self) -> frozenset[str]:
        return self.frame.host_fields

    def is_module(self, name: str) -> bool:
        return self.frame.scope.is_module(name)

    def is_device_name(self, name: str) -> bool:
        return self._device_names is not None and self._device_names.search(name) is not None

    def chosen(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """The conditional a name is an alias of, while it still is (`dtype` for `dtype =
        torch.float16 if torch.cuda.is_available() else torch.float32`); else the node."""
        if isinstance(node, cst.Name) and (choice := self.alias_choices.get(node.value)) is not None:
            alias = self.alias_of_name(node.value)
            if alias is not None and len(alias) > 1:
                return choice
        return node

    def alias_of_name(self, name: str) -> tuple[str, ...] | None:
        return self.frame.scope.alias_targets(name) if name in self.alias_names else None

    def foreign(self, qualified: str) -> bool:
        """Rules look at other projects' names, never at the scanned project's own."""
        first_party = self.index.first_party
        return not first_party or qualified.split(".", 1)[0] not in first_party

    def qualified(self, node: cst.BaseExpression) -> str | None:
        parts = dotted(node)
        if parts is None:
            return None
        base = self.frame.scope.resolve(parts[0])
        if base is None or not self.foreign(base):
            return None
        return ".".join((base, *parts[1:])) if len(parts) > 1 else base

    def alternatives(self, node: cst.BaseExpression, qualified: str | None) -> tuple[str, ...]:
        """Every qualified name `node` may stand for: more than one only through an alias
        bound to a conditional (`amp = torch.cuda.amp if c else torch.amp`)."""
        if qualified is None:
            return ()
        if not self.conditional_aliases:
            return (qualified,)
        parts = dotted(node)
        alias = self.alias_of_name(parts[0]) if parts is not None else None
        if alias is None or len(alias) == 1:
            return (qualified,)
        assert parts is not None
        return tuple(".".join((target, *parts[1:])) for target in alias)

    def lookup(self, table: GlobTable[RuleMatcher], node: cst.BaseExpression, qualified: str) -> list[RuleMatcher]:
        found = list(table.lookup(qualified))
        names = self.alternatives(node, qualified)
        if len(names) == 1:
            return found
        merged = list(found)
        for name in names[1:]:
            merged.extend(m for m in table.lookup(name) if m not in merged)
        return merged
