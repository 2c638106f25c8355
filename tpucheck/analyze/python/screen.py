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
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python.constraints import static_string
from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.scope import BUILTIN_NAMES
from tpucheck.analyze.python.screen_facts import Body, Collector, dotted_name
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


class _Resolver:
    """Every qualified name a local name may stand for anywhere in the file."""

    def __init__(self, collector: Collector, first_party: frozenset[str]) -> None:
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
        parts = dotted_name(value)
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

    def body(self, body: Body) -> bool:
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
        parts = dotted_name(func)
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
        if matcher.max_args is not None and not any(type(a) is ast.Starred for a in call.args) and len(call.args) > matcher.max_args:
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
                    if not values and constraint.any_expression:
                        continue  # an expression with no literal to exclude holds
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
            parts = dotted_name(node)
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
        collector = Collector(escapes="\\" in text)
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
            item: Body | None = body
            while item is not None and not item.trigger:
                item.trigger = True
                item = item.parent
    if not module.trigger:
        return ScreenResult(None)
    if "\r" in text.replace("\r\n", ""):
        return ScreenResult(text)  # a lone CR ends a line for the parsers: line numbers would not be ours
    spans = _hollow(collector.bodies, lines.lines)
    return _hollowed(lines.lines, spans) if spans else ScreenResult(text)


def _hollow(bodies: list[Body], lines: list[str]) -> list[tuple[int, int, str]]:
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
        gone: set[Body] = set()
        outermost: list[Body] = []
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


def _self_contained(body: Body, called: set[str], read: set[str], tested: set[str], marked: set[str]) -> bool:
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


def _body_span(body: Body, lines: list[str]) -> tuple[int, int, str] | None:
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
