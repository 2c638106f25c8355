"""Methods a class selects in one branch only: they run under that branch's test.

Why: a class picks its implementation once, in the constructor (`if algorithm ==
"biased": self.estimator = self.biased_estimator else: self.estimator =
self.unbiased_estimator`), and calls it through the attribute. The missing op inside
`biased_estimator` stops only who asks for `algorithm="biased"`, as an op written inside
the branch would (audit BD: an HSIC estimator's `torch.trace` behind a constructor
default, judged major, reported as a blocker). The walker walks such a method after the
rest of its class, under the guard the selecting assignment had.

Read from structure, never from names: a candidate is an undecorated method of the class
whose name occurs in the module's text only at its `def` and as the whole value of
assignments (`self.x = self.name`, `fn = cls.name`) inside the class. Any other mention (a
direct call, a string, a comment, a dispatch table) keeps it on the path, the safe side.
Callers in other modules are not seen: a method another module calls by name directly
keeps the guard (the reading is per module).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import libcst as cst

from tpucheck.analyze.python.context import Frame, Guard


class _Walker(Protocol):
    """What the class walk needs of the statement walker (statements.py imports this module)."""

    source: str
    assigned: frozenset[str] | None
    selected: dict[int, int]
    selected_guards: dict[int, list[Guard | None]]

    @property
    def frame(self) -> Frame: ...

    def walk(self, node: cst.CSTNode, ctx: str | None = None) -> None: ...

    def walk_block(self, statements: Sequence[cst.CSTNode], start: int = 0) -> None: ...

    def enter(self, **changes: Any) -> Any: ...


__all__ = ["assigned_attributes", "candidates", "walk_body"]

_ASSIGNED = re.compile(r"=[ \t]*(?:self|cls)\.([A-Za-z_]\w*)[ \t]*(?:#.*)?$", re.MULTILINE)
_RECEIVERS = ("self", "cls")


def assigned_attributes(source: str) -> frozenset[str]:
    """Names a module assigns as `= self.name` at a line's end: the only methods worth
    a class scan (most modules have none)."""
    return frozenset(_ASSIGNED.findall(source))


def candidates(node: cst.ClassDef, assigned: frozenset[str], source: str) -> dict[str, tuple[cst.FunctionDef, tuple[cst.Assign, ...]]]:
    """Method name -> (its def, the assignments that select it), for each method of the
    class that only assignments in the class name."""
    if not assigned or not isinstance(node.body, cst.IndentedBlock):
        return {}
    methods = {
        s.name.value: s
        for s in node.body.body
        if isinstance(s, cst.FunctionDef) and not s.decorators and s.name.value in assigned and not s.name.value.startswith("__")
    }
    if not methods:
        return {}
    sites: dict[str, list[cst.Assign]] = {}
    for assign in _assignments(node):
        value = assign.value
        if (
            len(assign.targets) == 1
            and isinstance(value, cst.Attribute)
            and isinstance(value.value, cst.Name)
            and value.value.value in _RECEIVERS
            and value.attr.value in methods
        ):
            sites.setdefault(value.attr.value, []).append(assign)
    out: dict[str, tuple[cst.FunctionDef, tuple[cst.Assign, ...]]] = {}
    for name, found in sites.items():
        if len(re.findall(rf"\b{re.escape(name)}\b", source)) == 1 + len(found):
            out[name] = (methods[name], tuple(found))
    return out


def walk_body(walker: _Walker, node: cst.ClassDef) -> None:
    """The class body; a method the class selects only by assignment last, under the
    guard its selections had when each had one (the walker's `on_assign` records them)."""
    if walker.assigned is None:
        walker.assigned = assigned_attributes(walker.source)
    chosen = candidates(node, walker.assigned, walker.source)
    if not chosen or not isinstance(node.body, cst.IndentedBlock):
        walker.walk(node.body)
        return
    later = {id(method) for method, _ in chosen.values()}
    for method, sites in chosen.values():
        walker.selected.update((id(site), id(method)) for site in sites)
    walker.walk_block([s for s in node.body.body if id(s) not in later])
    for method, sites in chosen.values():
        guards = walker.selected_guards.pop(id(method), [])
        guard = guards[0] if len(guards) == len(sites) and all(g is not None for g in guards) else None
        with walker.enter(guard=guard or walker.frame.guard):
            walker.walk(method)


def _assignments(node: cst.CSTNode) -> Iterator[cst.Assign]:
    """The assignment statements anywhere under a node."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Assign):
            yield current
            continue
        stack.extend(current.children)
