"""Availability checks a module defines for others to call: a module-level function taking
no argument that is true only where CUDA or an optional package is there.

A project often puts its "is xformers there?" logic in one module (`def xformers_enabled():
... return XFORMERS_IS_AVAILABLE`, the flag set by an import attempt) and tests it
everywhere else (`if model_management.xformers_enabled(): import xformers`). The module
that tests it cannot see that the call is an availability check; the tree can: each module
lists its checks here (a pure function of its text, cached with its import facts) and the
placement settles a pending test of such a call as a `guard.test` (judge/place.py).

Recognised by what the function returns, never by its name: every `return` gives a false
constant or something true only with the package (a flag the module sets in an import
attempt and clears in its handler, `torch.cuda.is_available()`, a check defined above it),
at least one of them the latter; or the function first leaves with a false constant unless
such a check holds (`if not xformers_enabled(): return False`), whatever it returns after.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from tpucheck.analyze.pyparse import parse_or_none

_CUE = re.compile(r"^def [A-Za-z_]\w*\(\s*\)", re.MULTILINE)
_ATTEMPT = r"try:[ \t]*(?:#[^\n]*)?\n[ \t]*(?:from|import)[ \t]"


@lru_cache(maxsize=8)
def _queries(availability_calls: tuple[str, ...]) -> tuple[tuple[str, ...], re.Pattern[str]]:
    """The calls' dotted text past the root, and one pattern for a file worth parsing (an
    import attempt or one of those calls): resolved once per rule set, not per file."""
    queries = tuple(call.split(".", 1)[1] for call in availability_calls if "." in call)
    return queries, re.compile("|".join([_ATTEMPT, *(re.escape(query + "(") for query in queries)]))


def availability_checks(text: str, availability_calls: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The module's availability checks, in source order: its check functions as `name()`,
    then its import flags as `NAME` (`try: import flash_attn; USE_FLASH = True / except
    ImportError: USE_FLASH = False`, read elsewhere as `configs.USE_FLASH`: a flag defined
    by an import attempt is true only where the package is there). `availability_calls`
    are the judgement's (`guards.availability_calls`); without imports resolved, a call is
    known by its dotted text past the root (`cuda.is_available()` of `torch` or `th`)."""
    queries, source = _queries(availability_calls)
    if source.search(text) is None:
        return ()
    module = parse_or_none(text)
    if module is None:
        return ()
    flags = _import_flags(module.body)
    checks: list[str] = []
    if _CUE.search(text) is not None:
        for statement in module.body:
            if isinstance(statement, ast.FunctionDef) and _no_arguments(statement.args) and _is_check(statement, flags, {c[:-2] for c in checks}, queries):
                checks.append(f"{statement.name}()")
    assigned = _assigned_flags(module, queries)
    return (*checks, *sorted({flag for flag in flags if _set_true_in_attempt(module.body, flag)} | assigned))


def _assigned_flags(module: ast.Module, queries: tuple[str, ...]) -> set[str]:
    """Module flags some code sets to a CUDA query, alone or `and`-ed with others
    (`cuda.CUDA_ENABLED = use_cuda and torch.cuda.is_available()` in a workflow function,
    audit BB: pytext's flag declared `False` in its own module): true only where CUDA is.
    An `or`, a conditional expression or any other value is no such flag."""

    def only_cuda(node: ast.expr) -> bool:
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            return _is_query(node.func, queries)
        return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and any(only_cuda(value) for value in node.values)

    found: set[str] = set()
    for node in ast.walk(module):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        # a module's attribute (`cuda.CUDA_ENABLED`), not an instance's (`self.use_cuda`)
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id not in ("self", "cls") and only_cuda(node.value):
            found.add(target.attr)
    return found


def _no_arguments(args: ast.arguments) -> bool:
    return not (args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg)


def _import_flags(body: list[ast.stmt]) -> set[str]:
    """Module-level names an import attempt's handler sets to False or None (`except
    ImportError: HAS_X = False`), in tries at module level or under its ifs."""
    flags: set[str] = set()
    for statement in body:
        if isinstance(statement, ast.If):
            flags |= _import_flags(statement.body) | _import_flags(statement.orelse)
        elif isinstance(statement, ast.Try) and any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in _shallow(statement.body)):
            for handler in statement.handlers:
                for line in handler.body:
                    if isinstance(line, ast.Assign) and _false(line.value):
                        flags.update(target.id for target in line.targets if isinstance(target, ast.Name))
            flags |= _import_flags(statement.body)
    return flags


def _set_true_in_attempt(body: list[ast.stmt], flag: str) -> bool:
    """Whether an import attempt's own body sets the flag to True (the handler clears it):
    the flag says the import worked, nothing else."""
    for statement in body:
        if isinstance(statement, ast.If) and (_set_true_in_attempt(statement.body, flag) or _set_true_in_attempt(statement.orelse, flag)):
            return True
        if isinstance(statement, ast.Try) and any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in _shallow(statement.body)):
            for line in _shallow(statement.body) + list(statement.orelse):
                if isinstance(line, ast.Assign) and isinstance(line.value, ast.Constant) and line.value.value is True and any(isinstance(t, ast.Name) and t.id == flag for t in line.targets):
                    return True
    return False


def _shallow(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a block and of the ifs in it, not of nested tries or functions."""
    out: list[ast.stmt] = []
    for statement in body:
        out.append(statement)
        if isinstance(statement, ast.If):
            out.extend(_shallow(statement.body) + _shallow(statement.orelse))
    return out


def _false(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value in (False, None))


def _is_check(function: ast.FunctionDef, flags: set[str], checks: set[str], queries: tuple[str, ...]) -> bool:
    bound: set[str] = set()  # locals bound to a check (`enabled = xformers_enabled()`)

    def asks(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in flags or node.id in bound
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            if isinstance(node.func, ast.Name) and node.func.id in checks:
                return True
            return _is_query(node.func, queries)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return any(asks(value) for value in node.values)
        return False

    returns = [node for node in _own_nodes(function) if isinstance(node, ast.Return)]
    if not returns:
        return False
    gate: int | None = None
    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) and asks(statement.value):
            bound.add(statement.targets[0].id)
        elif (
            gate is None and isinstance(statement, ast.If) and isinstance(statement.test, ast.UnaryOp) and isinstance(statement.test.op, ast.Not)
            and asks(statement.test.operand) and len(statement.body) == 1 and isinstance(statement.body[0], ast.Return) and _false(statement.body[0].value)
        ):  # fmt: skip
            gate = statement.lineno
    truthy = [r for r in returns if not _false(r.value)]
    if not truthy:
        return False
    if gate is not None and all(r.lineno > gate for r in truthy):
        return True
    return all(r.value is not None and asks(r.value) for r in truthy)


def _own_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The function's nodes, not those of functions, lambdas or classes defined in it."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))
    return out


def _is_query(func: ast.expr, queries: tuple[str, ...]) -> bool:
    """Whether a called name is one of the availability queries (known by their dotted text
    past the root: `cuda.is_available` of `torch` or `th`)."""
    dotted = _dotted(func)
    return any(dotted == query or dotted.endswith("." + query) for query in queries)


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
