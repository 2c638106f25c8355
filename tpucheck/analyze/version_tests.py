"""What a test of torch's version says on the torch releases the targets run.

Why: old research code keeps the path it took on torch 0.4 beside the modern one
(`if torch.__version__.startswith('0'): from .sync_bn.inplace_abn.bn import
InPlaceABNSync` else `torch.nn.SyncBatchNorm`). On TorchTPU (torch 2.11-2.15) the old
side never runs, and neither does the vendored CUDA extension only it imports (audit AM:
23 findings in HRNet's InPlace-ABN judged false).

The test is evaluated, not executed: a small interpreter over the expression's syntax
that knows `torch.__version__` and the handful of things code does with it (string
methods, indexing, `int`, the usual version parsers, comparisons, `and`/`or`/`not`).
Anything else makes the test undecided, and an undecided test changes nothing. The value
must be the same on every release in `guards.torch_versions`, else it is undecided too.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["version_test"]

_PARSERS = frozenset({"parse", "parse_version", "LooseVersion", "StrictVersion", "Version"})
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_LEADING = re.compile(r"\d+(?:\.\d+)*")


class _Undecided(Exception):
    """The expression holds something the interpreter does not know."""


def version_test(test: str, versions: Iterable[str]) -> bool | None:
    """The test's value on every torch release in `versions`, or None when it does not
    read torch's version, cannot be read here, or differs between releases."""
    if "__version__" not in test:
        return None
    try:
        tree = ast.parse(test.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not any(_is_torch_version(node) for node in ast.walk(tree)):
        return None
    values = set()
    for version in versions:
        try:
            value = _eval(tree.body, version)
        except (_Undecided, TypeError, ValueError, IndexError, RecursionError):
            return None
        if not isinstance(value, bool):
            return None
        values.add(value)
    return values.pop() if len(values) == 1 else None


def _is_torch_version(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "__version__" and isinstance(node.value, ast.Name) and node.value.id == "torch"


def _as_version(value: Any) -> tuple[int, ...]:
    if isinstance(value, tuple):
        return value
    found = _LEADING.match(str(value))
    if found is None:
        raise _Undecided
    return tuple(int(part) for part in found.group(0).split("."))


def _eval(node: ast.expr, version: str) -> Any:
    if _is_torch_version(node):
        return version
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e, version) for e in node.elts)
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, version) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, version)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, version)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, version)
            compare = _COMPARE.get(type(op))
            if compare is None:
                raise _Undecided
            if isinstance(left, tuple) or isinstance(right, tuple):
                left, right = _as_version(left), _as_version(right)
            if not compare(left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Subscript):
        target = _eval(node.value, version)
        if isinstance(node.slice, ast.Slice):
            lower = None if node.slice.lower is None else _eval(node.slice.lower, version)
            upper = None if node.slice.upper is None else _eval(node.slice.upper, version)
            return target[lower:upper]
        return target[_eval(node.slice, version)]
    if isinstance(node, ast.Call) and not node.keywords:
        return _call(node, version)
    raise _Undecided


def _call(node: ast.Call, version: str) -> Any:
    args = [_eval(a, version) for a in node.args]
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("startswith", "split", "strip") and not (isinstance(func.value, ast.Name)):
        target = _eval(func.value, version)
        if not isinstance(target, str):
            raise _Undecided
        method: Callable[..., Any] = getattr(target, func.attr)
        return method(*args)
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in _PARSERS and len(args) == 1:
        return _as_version(args[0])
    if name in ("int", "float", "str") and len(args) == 1:
        return {"int": int, "float": float, "str": str}[name](args[0])
    raise _Undecided
