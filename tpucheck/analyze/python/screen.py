"""The screen: which parts of a Python file could any rule match at all?

libcst is the parser of record (matches, snippets, positions, fixes), and its parse is
most of a scan's time (DESIGN.md, Speed); CPython's own parser is about ten times faster.
So before libcst sees a file, `ast` reads it and collects the facts rules key on: every
dotted name resolved through the file's imports and aliases, calls with their arguments
and keywords, attribute names, string literals, imports and function names. They are
looked up in the walker's own tables (`PythonIndex`), built from the rule set, so a new
rule is screened for as soon as it is loaded, and nothing here names a rule.

Every answer is a superset of the walker's: a name stands for whatever any import or
alias anywhere in the file binds it to (scopes and order ignored), a string counts
wherever it is (not only where a device goes), an argument constraint holds unless the
argument's literal certainly fails it. So the screen may send libcst code that then
matches nothing, never the reverse.

The outcome, per file:

- nothing can match: the file is *screened*, counted as analyzed and never parsed;
- otherwise libcst parses the file with the body of every function that holds nothing a
  rule can match *hollowed*: its lines become one `pass` and blank lines, so every line
  keeps its number and every kept line its text (positions, snippets and suppression
  comments are unchanged). The header (decorators, signature, defaults, annotations)
  stays and is walked as before.

A hollowed body must not change what the walk decides anywhere else. What the walk
carries out of a function body is: which module-level functions return host data (a
function of that name defined anywhere resets the mark), options with literal defaults
(nested parameters, `add_argument` flags, class fields), the `self.<field>`s a method
assigns (whether a field holds host data), and, for an `if` on a plain setting, whether
a side reaches another accelerator's API. So a body is hollowed only when the names it
defines are not called elsewhere, the options it declares are not tested by any `if`, the
fields it sets are not read elsewhere, and it reaches no other accelerator's API.
`tests/test_screen.py` holds the contract: every rule example and the real-code fixtures
give byte-identical JSON with the screen and without it (`--no-prefilter`).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python.constraints import static_string
from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.scope import BUILTIN_NAMES
from tpucheck.ruleset.matchers import string_needle
from tpucheck.ruleset.model import ArgConstraint, Matcher

__all__ = ["ScreenResult", "screen"]

MAX_ALIAS_ROUNDS = 4
"""Aliases of aliases (`amp = torch.cuda.amp; A = amp`) are followed this deep; a file
whose aliases still grow after that (`x = x.parent` in a loop) is parsed whole."""


@dataclass(frozen=True, slots=True)
class ScreenResult:
    """`text` is None when no rule can match the file (nothing to parse); otherwise the
    text to parse: the file's own, or a copy with function bodies hollowed."""

    text: str | None
    hollowed: int = 0
    """Lines left out of the parse."""


@dataclass(slots=True, eq=False)
class _Body:
    """The facts of one function body (or of the module), its nested functions' bodies
    aside. A function's header belongs to the body around it, which walks it."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | None
    parent: _Body | None
    module_level: bool = False
    """A function defined outside every function and class: the walk marks it when all
    it returns is host data."""
    children: list[_Body] = field(default_factory=list)
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

    def subtree(self) -> Iterator[_Body]:
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


class _Collector:
    """One pass over the tree; each fact goes to the innermost function body."""

    def __init__(self, escapes: bool) -> None:
        self.escapes = escapes
        """The text has a backslash: an f-string's text may be written with escapes."""
        self.bindings: dict[str, set[str]] = {}
        """Local name -> the qualified names imports bind it to, anywhere in the file."""
        self.aliases: dict[str, list[ast.expr]] = {}
        """Local name -> values of `name = <dotted name>` (or a conditional of them)."""
        self.stars: list[str] = []
        self.bodies: list[_Body] = []

    def run(self, tree: ast.Module) -> _Body:
        module = _Body(None, None)
        self.bodies.append(module)
        self.walk(tree.body, module, in_class=False)
        return module

    def walk(self, nodes: list[ast.stmt], body: _Body, *, in_class: bool) -> None:
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

    def attribute(self, node: ast.Attribute, body: _Body, push: Callable[[ast.AST], None]) -> None:
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

    def other(self, node: ast.AST, body: _Body, push: Callable[[ast.AST], None]) -> None:
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
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, body: _Body, push: Callable[[ast.AST], None], *, in_class: bool
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
        inner = _Body(node, body, module_level=body.node is None and not in_class)
        body.children.append(inner)
        self.bodies.append(inner)
        self.walk(node.body, inner, in_class=False)

    def klass(self, node: ast.ClassDef, body: _Body, push: Callable[[ast.AST], None]) -> None:
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

    def fstring(self, node: ast.JoinedStr, body: _Body, push: Callable[[ast.AST], None]) -> None:
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

    def imported(self, node: ast.Import | ast.ImportFrom, body: _Body) -> None:
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


def _note_argument(node: ast.Call, body: _Body) -> None:
    """`parser.add_argument("--use-liger", ...)` declares the option `use_liger`."""
    for value in (*node.args, *(k.value for k in node.keywords if k.arg == "dest")):
        if type(value) is ast.Constant and type(value.value) is str:
            body.options.add(value.value.lstrip("-").replace("-", "_"))


def _alias_form(value: ast.expr) -> bool:
    """What the walker binds as an alias: a dotted name, or a conditional of them."""
    if type(value) is ast.Name or type(value) is ast.Attribute:
        return True
    return type(value) is ast.IfExp and (_alias_form(value.body) or _alias_form(value.orelse))


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        parts.append(node.id)
        parts.reverse()
        return parts
    return None


class _Resolver:
    """Every qualified name a local name may stand for anywhere in the file."""

    def __init__(self, collector: _Collector, first_party: frozenset[str]) -> None:
        self.first_party = first_party
        self.stars = collector.stars
        self.names: dict[str, set[str]] = {name: set(targets) for name, targets in collector.bindings.items()}
        self._bases: dict[str, tuple[str, ...]] = {}
        self.complete = True
        if collector.aliases:
            self.complete = self._follow(collector.aliases)
            self._bases.clear()

    def _follow(self, aliases: dict[str, list[ast.expr]]) -> bool:
        for _ in range(MAX_ALIAS_ROUNDS):
            grown = False
            for name, values in aliases.items():
                found = self.names.setdefault(name, set())
                before = len(found)
                for value in values:
                    found.update(q for q in self._alias_targets(value) if not q.startswith("builtins."))
                grown = grown or len(found) != before
            self._bases.clear()
            if not grown:
                return True
        return False

    def _alias_targets(self, value: ast.expr) -> list[str]:
        if type(value) is ast.IfExp:
            return self._alias_targets(value.body) + self._alias_targets(value.orelse)
        parts = _dotted(value)
        return self.qualified(parts) if parts is not None else []

    def base(self, name: str) -> tuple[str, ...]:
        found = self._bases.get(name)
        if found is None:
            names = set(self.names.get(name, ()))
            names.update(f"{module}.{name}" for module in self.stars)
            if name in BUILTIN_NAMES:
                names.add(f"builtins.{name}")
            if self.first_party:  # the project's own names are never a rule's
                names = {q for q in names if q.split(".", 1)[0] not in self.first_party}
            found = self._bases[name] = tuple(names)
        return found

    def qualified(self, parts: list[str] | tuple[str, ...]) -> list[str]:
        """The full names a dotted name may stand for."""
        rest = ".".join(parts[1:])
        return [f"{q}.{rest}" if rest else q for q in self.base(parts[0])]

    def prefixes(self, chain: tuple[str, ...]) -> Iterator[str]:
        """Each full name a chain may stand for, and every shorter name it starts with."""
        for base in self.base(chain[0]):
            name = base
            yield name
            for part in chain[1:]:
                name = f"{name}.{part}"
                yield name


class _Lines:
    """The text's lines as CPython numbers them (split at LF only; a CR stays on its line)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

    def segment(self, node: ast.expr) -> str | None:
        """A node's source (columns are UTF-8 offsets)."""
        lines = self.lines
        first, last, start, end = node.lineno, node.end_lineno, node.col_offset, node.end_col_offset
        if last is None or end is None or last > len(lines):
            return None
        if first == last:
            return lines[first - 1].encode("utf-8", "surrogatepass")[start:end].decode("utf-8", "replace")
        head = lines[first - 1].encode("utf-8", "surrogatepass")[start:].decode("utf-8", "replace")
        tail = lines[last - 1].encode("utf-8", "surrogatepass")[:end].decode("utf-8", "replace")
        return "\n".join([head, *lines[first : last - 1], tail])


class _Check:
    """The walker's questions, asked of one file's facts."""

    def __init__(self, index: PythonIndex, resolver: _Resolver, lines: _Lines) -> None:
        self.index = index
        self.resolver = resolver
        self.lines = lines
        self.strings = [(m.regex, string_needle(m.regex)) for _, m in index.strings if m.regex is not None]
        """Each string matcher's regex, and the word every value it matches starts with."""
        self.other = index.other_accelerator_apis

    def body(self, body: _Body) -> bool:
        """Whether anything in this body (nested bodies aside) may match."""
        index = self.index
        if index.imports:
            for name in body.imports:
                if name.split(".", 1)[0] not in index.first_party and index.imports.lookup(name):
                    return True
        if index.define:
            for name in body.defines:
                for _, matcher in index.define.lookup(name):
                    if not any(fnmatchcase(name, p) for p in matcher.exclude):
                        return True
        if index.attribute and any(index.attribute.lookup(name) for name in body.attributes):
            return True
        if self.strings:
            if any(self.string(value) for value in body.strings):
                return True
            if any(self.fstring(node, value) for node, value in body.fstrings):
                return True
        if any(self.chain(chain) for chain in body.chains):
            return True
        return any(self.call(call) for call in body.calls)

    def chain(self, chain: tuple[str, ...]) -> bool:
        """A reference or decorator rule on the name or a shorter one, or another
        accelerator's API (which decides which side of an `if` is a TPU path)."""
        reference, decorator, other = self.index.reference, self.index.decorator, self.other
        for name in self.resolver.prefixes(chain):
            if reference.lookup(name) or decorator.lookup(name):
                return True
            if other and (name + ".").startswith(other):
                return True
        return False

    def string(self, value: str) -> bool:
        return any(regex.fullmatch(value) for regex, _ in self.strings)

    def fstring(self, node: ast.JoinedStr, value: str | None) -> bool:
        if value is not None:
            return self.string(value)
        # libcst reads the text as written: a matcher whose values start with a literal
        # word needs it in the source, and only then is the source read as libcst does
        source = self.lines.segment(node)
        if source is not None and all(needle is not None and needle not in source for _, needle in self.strings):
            return False
        written = self.libcst_string(node)
        return written is None or self.string(written)

    def call(self, call: ast.Call) -> bool:
        index, resolver = self.index, self.resolver
        func = call.func
        parts = _dotted(func)
        callees = resolver.qualified(parts) if parts is not None else []
        if index.call:
            for name in callees:
                for _, matcher in index.call.lookup(name):
                    if self.may_hold(matcher, call):
                        return True
        method = func.attr if type(func) is ast.Attribute else None
        if method is not None and index.method:
            for _, matcher in index.method.lookup(method):
                if self.may_hold(matcher, call):
                    return True
        if index.keyword:
            called = [*callees, f".{method}"] if method else callees
            for keyword in call.keywords:
                if keyword.arg is not None:
                    for _, matcher in index.keyword.lookup(keyword.arg):
                        if self.keyword_may_hold(matcher, keyword, called):
                            return True
        return False

    def may_hold(self, matcher: Matcher, call: ast.Call) -> bool:
        """`constraints.args_hold`, unless it certainly fails."""
        if matcher.arity is not None and len(call.args) + len(call.keywords) != matcher.arity:
            return False
        for constraint in matcher.args:
            argument = _find(call, constraint)
            if constraint.missing:
                if argument is not None or any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
                    return False
                continue
            if argument is None:
                return False
            if constraint.value is not None:
                values = self.values(argument)
                if values is not None and not any(constraint.value.fullmatch(v) for v in values):
                    return False
        return True

    def keyword_may_hold(self, matcher: Matcher, keyword: ast.keyword, called: list[str]) -> bool:
        """`constraints.keyword_holds`, unless it certainly fails (`not_in_call` is left
        out: a callee the screen resolves too widely must not rule a keyword out)."""
        if matcher.in_call and not any(fnmatchcase(n, p) for n in called for p in matcher.in_call):
            return False
        if matcher.value is not None:
            values = self.values(keyword.value)
            return values is None or any(matcher.value.fullmatch(v) for v in values)
        return True

    def values(self, node: ast.expr) -> list[str] | None:
        """The values an argument constraint tests (`constraints._values`; a superset), or
        None when they cannot be told."""
        items: list[ast.expr] | None = None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.IfExp):
            items = [node.body, node.orelse]
        elif isinstance(node, ast.Dict):
            items = node.values
        if items is None:
            return self.literal_values(node)
        found: list[str] = []
        for item in items:
            values = self.values(item)
            if values is None:
                return None
            found.extend(values)
        return found

    def literal_values(self, node: ast.expr) -> list[str] | None:
        """`constraints.literal_value`, read from `ast` (None: cannot be told)."""
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str):
                return [value]
            if value is True or value is False or value is None:
                return [str(value)]
            if type(value) is int or type(value) is float:
                return self.written(node)
            return []  # bytes, an ellipsis, an imaginary number: no value libcst reads
        if isinstance(node, (ast.Name, ast.Attribute)):
            parts = _dotted(node)
            return [] if parts is None else [*self.resolver.qualified(parts), ".".join(parts)]
        if isinstance(node, ast.Call):
            if not isinstance(node.func, (ast.Name, ast.Attribute)):
                return []
            callee = self.literal_values(node.func)
            return None if callee is None else [f"{c}()" for c in callee]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            number = node.operand
            if type(number.value) is int or type(number.value) is float:
                written = self.written(number)
                return None if written is None else [f"-{v}" for v in written]
            return []
        if isinstance(node, ast.JoinedStr):
            text = self.libcst_string(node)
            return None if text is None else [text]
        return []

    def written(self, number: ast.Constant) -> list[str] | None:
        """A number as written: libcst compares its source text (`1_000`, `0x10`)."""
        text = self.lines.segment(number)
        return None if text is None else [text]

    def libcst_string(self, node: ast.JoinedStr) -> str | None:
        """The value libcst reads for an f-string (text parts as written), from its source."""
        source = self.lines.segment(node)
        if source is None:
            return None
        try:
            expression = cst.parse_expression(f"({source})")
        except Exception:
            return None
        return static_string(expression) if isinstance(expression, cst.BaseString) else None


def _find(call: ast.Call, constraint: ArgConstraint) -> ast.expr | None:
    if constraint.name is not None:
        for keyword in call.keywords:
            if keyword.arg == constraint.name:
                return keyword.value
    if constraint.position is not None:
        positional = [a for a in call.args if type(a) is not ast.Starred]
        if constraint.position < len(positional):
            return positional[constraint.position]
    return None


def screen(text: str, index: PythonIndex) -> ScreenResult:
    """What libcst must parse of `text` for the walk to find all it finds in the whole
    file. Text `ast` cannot read is parsed whole (libcst then reports the error)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours to report
            tree = ast.parse(text)
        collector = _Collector(escapes="\\" in text)
        module = collector.run(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ScreenResult(text)
    resolver = _Resolver(collector, index.first_party)
    if not resolver.complete:
        return ScreenResult(text)
    lines = _Lines(text)
    check = _Check(index, resolver, lines)
    for body in collector.bodies:
        if not body.trigger and check.body(body):
            item: _Body | None = body
            while item is not None and not item.trigger:
                item.trigger = True
                item = item.parent
    if not module.trigger:
        return ScreenResult(None)
    if "\r" in text.replace("\r\n", ""):
        return ScreenResult(text)  # a lone CR ends a line for the parsers: line numbers would not be ours
    spans = _hollow(collector.bodies, lines.lines)
    return _hollowed(lines.lines, spans) if spans else ScreenResult(text)


def _hollow(bodies: list[_Body], lines: list[str]) -> list[tuple[int, int, str]]:
    """The spans of the bodies to leave out (none inside another), in line order.

    Every function body nothing can match in is a candidate; a candidate whose outcome the
    kept code uses (a host-data mark it sets or resets, a field it assigns, an option it
    declares) is kept, which keeps more code, so this repeats until nothing changes."""
    # the functions the walk may mark as returning host data: a function of the same name
    # defined anywhere resets the mark, so only these names matter
    marked = {body.node.name for body in bodies if body.module_level and body.returns and body.node is not None}
    spans = {body: span for body in bodies[1:] if not body.trigger and (span := _body_span(body, lines)) is not None}
    candidates = set(spans)
    while True:
        gone: set[_Body] = set()
        outermost: list[_Body] = []
        for body in bodies:  # parents before children
            if body.parent in gone:
                gone.add(body)
            elif body in candidates:
                gone.add(body)
                outermost.append(body)
        called: set[str] = set()
        read: set[str] = set()
        tested: set[str] = set()
        for body in bodies:
            if body not in gone:
                called.update(body.called)
                read.update(body.read)
                tested |= body.tested
        used = [body for body in outermost if not _self_contained(body, called, read, tested, marked)]
        if not used:
            return sorted(spans[body] for body in outermost)
        candidates.difference_update(used)


def _self_contained(body: _Body, called: set[str], read: set[str], tested: set[str], marked: set[str]) -> bool:
    """Whether the kept code (whose calls, reads and tests are given) uses nothing this
    body decides: no function that may return host data is (re)defined in it and called,
    no field set in it is read, no option declared in it is tested by an `if`."""
    defined: set[str] = set()
    fields: set[str] = set()
    options: set[str] = set()
    for item in body.subtree():
        defined.update(item.defines)
        fields |= item.fields
        options |= item.options
    assert body.node is not None
    defined &= marked
    if body.module_level and body.returns:
        defined.add(body.node.name)
    if any(name in called for name in defined) or any(name in read for name in fields):
        return False
    return not options & tested


_INDENT = re.compile(r"[ \t]*")


def _body_span(body: _Body, lines: list[str]) -> tuple[int, int, str] | None:
    """(first line, last line, indentation) of a function body worth hollowing: one that
    starts a line of its own, after the header, and spans more than one line."""
    node = body.node
    assert node is not None
    first_statement = node.body[0]
    decorators = getattr(first_statement, "decorator_list", None)
    first = min([first_statement.lineno, *(d.lineno for d in decorators or ())])
    column = decorators[0].col_offset - 1 if decorators and first != first_statement.lineno else first_statement.col_offset
    last = node.end_lineno
    if last is None or first <= node.lineno or last <= first or first > len(lines):
        return None
    indent = _INDENT.match(lines[first - 1])
    assert indent is not None
    if not indent.group() or indent.end() != column:
        return None  # the first statement shares its line with the header's end
    return first, last, indent.group()


def _hollowed(lines: list[str], spans: list[tuple[int, int, str]]) -> ScreenResult:
    out: list[str] = []
    at = 0  # index of the next line to copy
    hollowed = 0
    for first, last, indent in spans:
        out.extend(lines[at : first - 1])
        out.append(f"{indent}pass\r" if lines[first - 1].endswith("\r") else f"{indent}pass")
        out.extend("\r" if lines[number].endswith("\r") else "" for number in range(first, last))
        hollowed += last - first
        at = last
    out.extend(lines[at:])
    return ScreenResult("\n".join(out), hollowed)
