"""The facts the screen (screen.py) reads of a Python file, collected in one pass over its
`ast`: per function body, the dotted names, calls, attribute names, strings, imports and
function names in it (what rules key on), and what the body decides for code outside it
(functions that may return host data, options, fields, the names it reads). A function's
header belongs to the body around it, which walks it; a class body is walked in the body
around it, as the walker binds its names there."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Body", "Collector", "dotted_name"]

@dataclass(slots=True, eq=False)
class Body:
    """The facts of one function body (or of the module), its nested functions' bodies
    aside. A function's header belongs to the body around it, which walks it."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | None
    parent: Body | None
    module_level: bool = False
    """A function defined outside every function and class: the walk marks it when all
    it returns is host data."""
    children: list[Body] = field(default_factory=list)
    chains: set[tuple[str, ...]] = field(default_factory=set)
    """Dotted names (`torch.cuda.synchronize` as its parts) and plain names."""
    calls: list[ast.Call] = field(default_factory=list)
    attributes: set[str] = field(default_factory=set)
    strings: set[str] = field(default_factory=set)
    fstrings: list[tuple[ast.JoinedStr, str | None]] = field(default_factory=list)
    """f-strings and their text as libcst reads it (None: only their source can tell)."""
    imports: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    """Names of the functions defined here (not in nested bodies)."""
    options: set[str] = field(default_factory=set)
    """Options declared here: parameters with defaults of the functions defined here,
    `add_argument` flags, class fields."""
    fields: set[str] = field(default_factory=set)
    """`self.<field>`s assigned here."""
    called: set[str] = field(default_factory=set)
    """Plain names called here (`f(x)`): a call reads a function's host-data mark."""
    read: set[str] = field(default_factory=set)
    """Attribute names read here (`self.f`)."""
    tested: set[str] = field(default_factory=set)
    """Names and attributes in the tests of its `if`s: where an option is read."""
    returns: bool = False
    """A `return` here gives a value (a function that returns nothing is never marked as
    returning host data)."""
    trigger: bool = False
    """Something here or in a nested body may match."""

    def subtree(self) -> Iterator[Body]:
        stack = [self]
        while stack:
            body = stack.pop()
            yield body
            stack.extend(body.children)


_NOT_CHILDREN = frozenset({"ctx", "op", "ops", "type_comment", "kind", "conversion", "level", "is_async", "simple"})
_NAME_FIELDS = frozenset({"name", "rest", "arg"})
"""Identifier fields the walker may read as names: a match pattern's captures, a type
parameter, a lambda's parameters (a superset)."""
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type[ast.AST]) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(name for name in kind._fields if name not in _NOT_CHILDREN)
    return found


class Collector:
    """One pass over the tree; each fact goes to the innermost function body."""

    def __init__(self, escapes: bool) -> None:
        self.escapes = escapes
        """The text has a backslash: an f-string's text may be written with escapes."""
        self.bindings: dict[str, set[str]] = {}
        """Local name -> the qualified names imports bind it to, anywhere in the file."""
        self.aliases: dict[str, list[ast.expr]] = {}
        """Local name -> values of `name = <dotted name>` (or a conditional of them)."""
        self.stars: list[str] = []
        self.bodies: list[Body] = []

    def run(self, tree: ast.Module) -> Body:
        module = Body(None, None)
        self.bodies.append(module)
        self.walk(tree.body, module, in_class=False)
        return module

    def walk(self, nodes: list[ast.stmt], body: Body, *, in_class: bool) -> None:
        """Every node of these statements but nested function bodies (each its own)."""
        stack: list[ast.AST] = list(reversed(nodes))
        chains, called = body.chains, body.called
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            if type(node) is ast.Name:
                chains.add((node.id,))
            elif type(node) is ast.Attribute:
                self.attribute(node, body, push)
            elif type(node) is ast.Call:
                body.calls.append(node)
                func = node.func
                if type(func) is ast.Name:
                    called.add(func.id)
                elif type(func) is ast.Attribute and func.attr == "add_argument":
                    _note_argument(node, body)
                push(func)
                extend(node.args)
                for keyword in node.keywords:
                    push(keyword.value)
            elif type(node) is ast.Constant:
                if type(node.value) is str:
                    body.strings.add(node.value)
            elif type(node) is ast.Assign or type(node) is ast.AnnAssign or type(node) is ast.NamedExpr:
                targets: list[ast.expr] = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                if value is not None:
                    if _alias_form(value):
                        self.aliases_from(targets, value)
                    push(value)
                extend(targets)
                if type(node) is ast.AnnAssign:
                    push(node.annotation)
            elif type(node) is ast.JoinedStr:
                self.fstring(node, body, push)
            elif type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef:
                self.function(node, body, push, in_class=in_class)
            elif type(node) is ast.ClassDef:
                self.klass(node, body, push)
            elif type(node) is ast.Import or type(node) is ast.ImportFrom:
                self.imported(node, body)
            elif type(node) is ast.Return:
                if node.value is not None:
                    if not (type(node.value) is ast.Constant and node.value.value is None):
                        body.returns = True
                    push(node.value)
            elif type(node) is ast.If:
                _tested(node.test, body.tested)
                push(node.test)
                extend(node.body)
                extend(node.orelse)
            else:
                self.other(node, body, push)

    def attribute(self, node: ast.Attribute, body: Body, push: Callable[[ast.AST], None]) -> None:
        """A whole chain (`a.b.c`) at once: its dotted name, its attribute names, what it reads."""
        read = body.read
        parts = [node.attr]
        base = node.value
        if type(node.ctx) is ast.Store:
            if type(base) is ast.Name and base.id == "self":
                body.fields.add(node.attr)
        else:
            read.add(node.attr)
        while type(base) is ast.Attribute:
            parts.append(base.attr)
            read.add(base.attr)
            base = base.value
        body.attributes.update(parts)
        if type(base) is ast.Name:
            parts.append(base.id)
            parts.reverse()
            body.chains.add(tuple(parts))
        else:
            push(base)

    def aliases_from(self, targets: list[ast.expr], value: ast.expr) -> None:
        for target in targets:
            if type(target) is ast.Name:
                self.aliases.setdefault(target.id, []).append(value)

    def other(self, node: ast.AST, body: Body, push: Callable[[ast.AST], None]) -> None:
        """Any other node: its children, and the identifiers the walker may read as names
        (a match pattern's captures and keywords, a type parameter: a superset)."""
        kind = type(node)
        for name in _fields(kind):
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        push(item)
                    elif type(item) is str and kind is not ast.Global and kind is not ast.Nonlocal:
                        body.chains.add((item,))
            elif isinstance(value, ast.AST):
                push(value)
            elif type(value) is str and name in _NAME_FIELDS:
                body.chains.add((value,))

    def function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, body: Body, push: Callable[[ast.AST], None], *, in_class: bool
    ) -> None:
        """The header goes on the outer body's stack; the body is a body of its own."""
        for decorator in node.decorator_list:
            push(decorator)
        arguments = node.args
        for default in arguments.defaults:
            push(default)
        for keyword_default in arguments.kw_defaults:
            if keyword_default is not None:
                push(keyword_default)
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
            if argument is not None and argument.annotation is not None:
                push(argument.annotation)
        if node.returns is not None:
            push(node.returns)
        for parameter in getattr(node, "type_params", ()):  # Python 3.12
            push(parameter)
        positional = [*arguments.posonlyargs, *arguments.args]
        body.options.update(a.arg for a in positional[len(positional) - len(arguments.defaults) :])
        body.options.update(a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None)
        body.defines.append(node.name)
        inner = Body(node, body, module_level=body.node is None and not in_class)
        body.children.append(inner)
        self.bodies.append(inner)
        self.walk(node.body, inner, in_class=False)

    def klass(self, node: ast.ClassDef, body: Body, push: Callable[[ast.AST], None]) -> None:
        """A class body is walked in the body around it (it binds names there, as the walker does)."""
        for item in (*node.decorator_list, *node.bases):
            push(item)
        for keyword in node.keywords:
            push(keyword.value)
            if keyword.arg:
                body.chains.add((keyword.arg,))
        for statement in node.body:
            if type(statement) is ast.AnnAssign and type(statement.target) is ast.Name and statement.value is not None:
                body.options.add(statement.target.id)  # a dataclass or config field: `use_liger: bool = False`
        for parameter in getattr(node, "type_params", ()):
            push(parameter)
        self.walk(node.body, body, in_class=True)

    def fstring(self, node: ast.JoinedStr, body: Body, push: Callable[[ast.AST], None]) -> None:
        """libcst reads an f-string's text parts as written: where escapes, doubled braces
        or a `{x=}` may make that differ from `ast`'s value, only the source can tell."""
        parts: list[str] = []
        exact = not self.escapes
        values = node.values
        for at, part in enumerate(values):
            if type(part) is ast.Constant:
                text = str(part.value)
                parts.append(text)
                if "{" in text or "}" in text or (at + 1 < len(values) and text.rstrip().endswith("=")):
                    exact = False
            elif type(part) is ast.FormattedValue:
                parts.append("{}")
                push(part.value)
                if part.format_spec is not None:
                    push(part.format_spec)
        body.fstrings.append((node, "".join(parts) if exact else None))

    def imported(self, node: ast.Import | ast.ImportFrom, body: Body) -> None:
        bindings = self.bindings
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    bindings.setdefault(alias.asname, set()).add(alias.name)
                else:
                    first = alias.name.split(".", 1)[0]
                    bindings.setdefault(first, set()).add(first)
                body.imports.append(alias.name)
            return
        if node.level or node.module is None:
            for alias in node.names:
                if alias.name != "*":
                    bindings.setdefault(alias.asname or alias.name, set()).add(f".{alias.name}")
            return
        module = node.module
        body.imports.append(module)
        for alias in node.names:
            if alias.name == "*":
                self.stars.append(module)
                continue
            bindings.setdefault(alias.asname or alias.name, set()).add(f"{module}.{alias.name}")
            body.imports.append(f"{module}.{alias.name}")


def _tested(test: ast.expr, names: set[str]) -> None:
    """The names an `if` test may read an option by (`conditions.option_polarity`): the last
    part of a dotted name that is the test, or is under `not`, `and`/`or` or a comparison."""
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is ast.Name:
            names.add(node.id)
        elif type(node) is ast.Attribute:
            names.add(node.attr)
        elif type(node) is ast.UnaryOp:
            stack.append(node.operand)
        elif type(node) is ast.BoolOp:
            stack.extend(node.values)
        elif type(node) is ast.Compare:
            stack.append(node.left)
            stack.extend(node.comparators)


def _note_argument(node: ast.Call, body: Body) -> None:
    """`parser.add_argument("--use-liger", ...)` declares the option `use_liger`."""
    for value in (*node.args, *(k.value for k in node.keywords if k.arg == "dest")):
        if type(value) is ast.Constant and type(value.value) is str:
            body.options.add(value.value.lstrip("-").replace("-", "_"))


def _alias_form(value: ast.expr) -> bool:
    """What the walker binds as an alias: a dotted name, or a conditional of them."""
    if type(value) is ast.Name or type(value) is ast.Attribute:
        return True
    return type(value) is ast.IfExp and (_alias_form(value.body) or _alias_form(value.orelse))


def dotted_name(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        parts.append(node.id)
        parts.reverse()
        return parts
    return None
