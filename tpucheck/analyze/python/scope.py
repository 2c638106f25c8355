"""Our own import table: which qualified name a local name stands for.

libcst's QualifiedNameProvider answers this for every node and costs about ten parses
(DESIGN.md, Speed). Rules only ever ask about names bound by imports, or by a plain
assignment of an imported name (`sync = torch.cuda.synchronize`), so a table of such
bindings per scope, plus the set of names a function rebinds locally (which shadow the
imports), answers the same questions for the price of a dict lookup.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator

import libcst as cst

BUILTIN_NAMES = frozenset(dir(builtins))


_EMPTY = cst.Module(body=[])


def node_code(node: cst.CSTNode) -> str:
    """A node's source code, rendered without its module."""
    return _EMPTY.code_for_node(node)


def dotted(node: cst.BaseExpression) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None when the chain does not start with a plain name."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        parts.reverse()
        return parts
    return None


class Scope:
    """Import bindings of one module or function body."""

    __slots__ = ("_locals", "aliases", "bindings", "function", "modules", "parent", "stars")

    def __init__(self, parent: Scope | None = None, function: cst.FunctionDef | cst.Lambda | None = None) -> None:
        self.bindings: dict[str, str] = {}
        self.modules: set[str] = set()
        """Names bound by a plain `import x` statement: certainly modules, never objects."""
        self.stars: list[str] = []
        self.aliases: dict[str, tuple[str, ...]] = {}
        """Names bound by assignment (`amp = torch.cuda.amp if c else torch.amp`): every
        qualified name they may stand for, the first also in `bindings`."""
        self.parent = parent
        self.function = function
        self._locals: frozenset[str] | None = None

    def bind_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                parts = dotted(alias.name)
                if parts is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                    self.bindings[local] = ".".join(parts)
                else:
                    local = parts[0]
                    self.bindings[local] = parts[0]
                self.modules.add(local)
                self.aliases.pop(local, None)
            return
        module = import_from_module(node)
        if isinstance(node.names, cst.ImportStar):
            if module is not None:
                self.stars.append(module)
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            name = alias.name.value
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            # A relative import binds a project-local name: never one a rule knows.
            self.bindings[local] = f"{module}.{name}" if module is not None else f".{name}"
            self.modules.discard(local)
            self.aliases.pop(local, None)

    def bind_alias(self, name: str, targets: tuple[str, ...], *, module: bool = False) -> None:
        """`name = <resolved name>`: the name now stands for what the value stands for; a
        module's alias (`np = numpy`) is a module still, whose attributes are its functions,
        never a tensor's methods (audit BB: zero123plus's `np.nonzero(mask)`)."""
        self.bindings[name] = targets[0]
        self.aliases[name] = targets
        if module:
            self.modules.add(name)
        else:
            self.modules.discard(name)

    def unbind(self, name: str) -> None:
        """`name = <anything else>` clears an earlier alias. An import binding survives at
        module level, where `except ImportError: flash_attn = fallback` is the usual
        rebinding and the import is still the path that matters; in a function every
        rebinding shadows (`local_names`)."""
        if self.aliases.pop(name, None) is not None:
            del self.bindings[name]

    def alias_targets(self, name: str) -> tuple[str, ...] | None:
        """What an assignment-made alias stands for; None when the name is an import or unknown."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return scope.aliases.get(name)
            if scope.function is not None and name in scope.local_names():
                return None
            scope = scope.parent
        return None

    def resolve(self, name: str) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            bound = scope.bindings.get(name)
            if bound is not None:
                return bound
            if scope.function is not None and name in scope.local_names():
                return None
            scope = scope.parent
        root = self.root()
        for module in root.stars:
            return f"{module}.{name}" if len(root.stars) == 1 else None
        if name in BUILTIN_NAMES:
            return f"builtins.{name}"
        return None

    def is_module(self, name: str) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return name in scope.modules
            if scope.function is not None and name in scope.local_names():
                return False
            scope = scope.parent
        return False

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def local_names(self) -> frozenset[str]:
        """Names the function binds other than by import: they shadow outer imports."""
        if self._locals is None:
            assert self.function is not None
            self._locals = frozenset(_function_locals(self.function))
        return self._locals


def import_from_module(node: cst.ImportFrom) -> str | None:
    if node.relative:
        return None
    if node.module is None:
        return None
    parts = dotted(node.module)
    return ".".join(parts) if parts else None


def _function_locals(function: cst.FunctionDef | cst.Lambda) -> Iterator[str]:
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        yield param.name.value
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            yield star.name.value
    if isinstance(function, cst.FunctionDef):
        declared_outer: set[str] = set()
        names = list(_block_bindings(function.body, declared_outer))
        yield from (n for n in names if n not in declared_outer)


def target_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def _small_bindings(small: cst.BaseSmallStatement, declared_outer: set[str]) -> Iterator[str]:
    if isinstance(small, cst.Assign):
        for target in small.targets:
            yield from target_names(target.target)
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        yield from target_names(small.target)
    elif isinstance(small, cst.TypeAlias):
        yield small.name.value
    elif isinstance(small, (cst.Global, cst.Nonlocal)):
        declared_outer.update(n.name.value for n in small.names)


def _pattern_names(pattern: cst.CSTNode) -> Iterator[str]:
    """Names a `case` pattern captures (`case [x, {"k": y, **rest}] | Point(x=z) as w`)."""
    stack: list[cst.CSTNode] = [pattern]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.MatchAs):
            if node.name is not None:
                yield node.name.value
            if node.pattern is not None:
                stack.append(node.pattern)
        elif isinstance(node, cst.MatchStar):
            if node.name is not None:
                yield node.name.value
        elif isinstance(node, (cst.MatchList, cst.MatchTuple)):
            stack.extend(element if isinstance(element, cst.MatchStar) else element.value for element in node.patterns)
        elif isinstance(node, cst.MatchMapping):
            stack.extend(element.pattern for element in node.elements)
            if node.rest is not None:
                yield node.rest.value
        elif isinstance(node, cst.MatchClass):
            stack.extend(element.value for element in node.patterns)
            stack.extend(element.pattern for element in node.kwds)
        elif isinstance(node, cst.MatchOr):
            stack.extend(element.pattern for element in node.patterns)


def _blocks(statement: cst.BaseCompoundStatement) -> Iterator[cst.CSTNode]:
    if isinstance(statement, cst.Match):  # no body of its own: one block per case
        for case in statement.cases:
            yield case.body
        return
    yield statement.body
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):
        yield orelse
    elif orelse is not None:
        yield orelse.body
    final = getattr(statement, "finalbody", None)
    if final is not None:
        yield final.body


def _block_bindings(block: cst.CSTNode, declared_outer: set[str]) -> Iterator[str]:
    """Statement-level bindings, not descending into nested functions or classes."""
    if isinstance(block, cst.SimpleStatementSuite):
        for small in block.body:
            yield from _small_bindings(small, declared_outer)
        return
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield from _small_bindings(small, declared_outer)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            yield statement.name.value
        elif isinstance(statement, cst.BaseCompoundStatement):
            if isinstance(statement, cst.For):
                yield from target_names(statement.target)
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    if item.asname is not None:
                        yield from target_names(item.asname.name)
            elif isinstance(statement, cst.Match):
                for case in statement.cases:
                    yield from _pattern_names(case.pattern)
            for handler in getattr(statement, "handlers", ()):
                if handler.name is not None and isinstance(handler.name.name, cst.Name):
                    yield handler.name.name.value
            for inner in _blocks(statement):
                yield from _block_bindings(inner, declared_outer)
