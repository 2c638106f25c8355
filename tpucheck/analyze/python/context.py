"""What the walk knows at a node, as one immutable value, and the read-only view of it that
the fact modules (conditions, host data, constraints) take.

The walker pushes a new `Frame` when it enters a branch, a loop, a function or a class and
pops it when it leaves (`Walker.enter`), so no other module ever changes its state: they
are functions of (node, `Names`) that return facts. A frame holds references to the
binding tables of the body it is in (the import scope, the names bound to host data, the
`return`s seen): bindings change as statements run, so those tables are mutable, and a
new function or comprehension gets tables of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import libcst as cst

from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.scope import Scope
from tpucheck.findings import PENDING


@dataclass(frozen=True, slots=True)
class Guard:
    """Why code below a node keeps a fallback: the context rule that fired (`rule`, a key
    of rules/contexts.yaml's judgement entries) and the node that shows it (a condition, an
    except clause, a decorator), whose position the report gives. A `PENDING` guard keeps
    nothing yet: it names a setting this file does not declare, which the judgement
    resolves against the whole project's declarations (judge/place.py)."""

    rule: str
    node: cst.CSTNode
    outer: Guard | None = None
    """A pending guard inside another pending one (`if cfg.do_train: if cfg.use_qlora:`):
    either setting may be the one the project declares off."""

    @property
    def pending(self) -> bool:
        return self.rule == PENDING

    def marks(self) -> tuple[Guard, ...]:
        """This guard and the pending ones it sits in."""
        return (self, *(self.outer.marks() if self.outer is not None else ()))


@dataclass(frozen=True, slots=True)
class RoleMark:
    """Supporting code inside a product file (a `__main__` block, a benchmark or a test
    function), and the node that makes it so."""

    role: str
    rule: str
    node: cst.CSTNode


class Frame(NamedTuple):
    """The walk's context at a node. Immutable: a change is a new frame (`Walker.enter`).
    (A named tuple: the walk replaces frames often, and `_replace` costs a quarter of a
    frozen dataclass's `replace`.)"""

    scope: Scope
    host: set[str]
    """Simple names (and `self.<field>`) of the current function bound to host data: the
    last assignment wins."""
    returns: list[bool | None] | None = None
    """Per `return` of the module-level function being walked: host data or not (None:
    nothing); None outside such a function."""
    guard: Guard | None = None
    """The innermost reason this code keeps a fallback (None: the main path)."""
    guard_test: bool = False
    """Inside the condition of a CUDA guard or a test skip: a rule with `unless: guard` is
    not reported there, since the check is what keeps the fallback."""
    type_checking: bool = False
    in_loop: bool = False
    raise_caught: bool = False
    """In the body of a try whose handler swallows everything: a raise there exits as a
    return does (`excepts.swallows`)."""
    periodic: bool = False
    """Under `if step % N == 0:`: runs every N steps, not per step."""
    failure: bool = False
    """In an assert's message or a raise: runs only when the check fails."""
    fatal: bool = False
    """In the condition of an if whose side taken without CUDA raises or exits, or of an
    assert: a check that stops the program without CUDA (matchers with `fatal: true`)."""
    annotation: bool = False
    """Inside a type annotation: only calls are uses there."""
    report: bool = False
    """In the arguments of a print, warning or log call: it reports, it runs nothing a TPU lacks."""
    output: bool = False
    """In the arguments of a call that turns values into an image, a plot or audio
    (`guards.output_calls`): a copy to the host there is output, not a step's sync."""
    default: bool = False
    """In a parameter's default value: callers override it."""
    follows_half: bool = False
    """In the body of `if x.dtype == torch.float16:`: a cast to fp16 there follows an
    operand already in fp16 (`Hit.copy`)."""
    storing: bool = False
    """Walking an attribute assignment target: attribute matchers look for reads only."""
    role: RoleMark | None = None
    functions: tuple[str, ...] = ()
    """Enclosing function names, outermost first."""
    decorators: tuple[str, ...] = ()
    """Resolved decorators of the enclosing functions."""
    decorated: str | None = None
    """The function or class whose decorators are being walked: it names kernels."""
    class_kind: str | None = None
    """Inside a class: "test" (a test class) or "plain"."""
    class_bases: tuple[str, ...] = ()
    """Directly in a class body: its bases, resolved (`torch.autograd.Function`)."""
    host_fields: frozenset[str] = frozenset()
    """The `self.<field>`s the enclosing class only ever sets to host data."""
    data_class: bool = False
    """In a Dataset's methods: host data all through."""


class Names(Protocol):
    """What the fact modules may ask of the walk: name resolution through the imports and
    the host-data bindings in scope. Read-only."""

    @property
    def index(self) -> PythonIndex: ...

    @property
    def host_names(self) -> Set[str]: ...

    @property
    def host_fields(self) -> frozenset[str]: ...

    @property
    def host_functions(self) -> Set[str]: ...

    @property
    def flags(self) -> Set[str]:
        """Names this module sets from an import attempt or an availability check."""
        ...

    @property
    def counts(self) -> Set[str]:
        """Names this module sets from a CUDA device count."""
        ...

    @property
    def options(self) -> Mapping[str, str]:
        """Option names seen so far with their literal default (`use_triton=False`, a
        `store_true` flag): an option off by default keeps the code it turns on optional."""
        ...

    def qualified(self, node: cst.BaseExpression) -> str | None: ...

    def alternatives(self, node: cst.BaseExpression, qualified: str | None) -> tuple[str, ...]: ...

    def is_module(self, name: str) -> bool: ...

    def is_device_name(self, name: str) -> bool: ...
