"""Argument constraints of call matchers (`args`, `arity`, `label`, a keyword's `value`
and `in_call`): what a call's arguments are, as far as they can be read statically, and
whether they satisfy the rule. The walk decides *where* a rule may match; this decides
whether the call in front of it does."""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.scope import dotted
from tpucheck.ruleset.model import ArgConstraint, Matcher


def static_string(node: cst.BaseString) -> str | None:
    """The literal's text, with `{}` for f-string holes; None for bytes."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = static_string(node.left), static_string(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.FormattedString):
        parts = []
        for part in node.parts:
            parts.append(part.value if isinstance(part, cst.FormattedStringText) else "{}")
        return "".join(parts)
    return None


def literal_value(names: Names, node: cst.BaseExpression) -> str | None:
    """What an argument constraint compares against: a literal's value or a resolved name."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return "-" + node.expression.value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return node.value
    if isinstance(node, (cst.Name, cst.Attribute)):
        qualified = names.qualified(node)
        if qualified is not None:
            return qualified
        parts = dotted(node)
        return ".".join(parts) if parts else None
    if isinstance(node, (cst.ConcatenatedString, cst.FormattedString)):
        return static_string(node)
    if isinstance(node, cst.Call):
        # `nprocs=torch.cuda.device_count()` reads as "torch.cuda.device_count()".
        callee = literal_value(names, node.func) if isinstance(node.func, (cst.Name, cst.Attribute)) else None
        return f"{callee}()" if callee is not None else None
    return None


def _values(names: Names, node: cst.BaseExpression) -> list[str]:
    """The values a constraint tests: one literal, each element of a literal container
    (a constraint on `sources=[...]` holds when any source matches), or each arm of a
    conditional expression."""
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        found: list[str] = []
        for item in node.elements:
            found.extend(_values(names, item.value))
        return found
    if isinstance(node, cst.IfExp):  # `backend="nccl" if cuda else "gloo"`: either may run
        return [*_values(names, node.body), *_values(names, node.orelse)]
    if isinstance(node, cst.Dict):
        found = []
        for entry in node.elements:
            if isinstance(entry, cst.DictElement):
                found.extend(_values(names, entry.value))
        return found
    value = literal_value(names, node)
    return [] if value is None else [value]


def conditional_arm(names: Names, pattern: re.Pattern[str] | None, value: cst.BaseExpression) -> tuple[cst.IfExp, bool] | None:
    """For `x if test else y` of which only one arm's values match (`"flash_attention_2" if
    use_flash else None`): the conditional and whether that arm is its body. A match that
    holds on one arm alone runs only when the test picks that arm."""
    if pattern is None or not isinstance(value, cst.IfExp):
        return None
    body = any(pattern.fullmatch(v) for v in _values(names, value.body))
    orelse = any(pattern.fullmatch(v) for v in _values(names, value.orelse))
    return (value, body) if body != orelse else None


def constrained_arm(
    names: Names, matcher: Matcher, node: cst.Call, chosen: Callable[[cst.BaseExpression], cst.BaseExpression] | None = None
) -> tuple[cst.IfExp, bool] | None:
    """`conditional_arm` of the first argument constraint whose value is a conditional, or a
    name still bound to one (`chosen`: `x.to(dtype)` after `dtype = a if test else b`)."""
    for constraint in matcher.args:
        if constraint.value is None or constraint.missing:
            continue
        arg = _find_arg(node, constraint)
        value = (chosen(arg.value) if chosen is not None else arg.value) if arg is not None else None
        arm = conditional_arm(names, constraint.value, value) if value is not None else None
        if arm is not None:
            return arm
    return None


def call_label(names: Names, matcher: Matcher, node: cst.Call) -> str | None:
    if matcher.label is None:
        return None
    arg = _find_arg(node, matcher.label)
    return literal_value(names, arg.value) if arg is not None else None


def _find_arg(node: cst.Call, constraint: ArgConstraint) -> cst.Arg | None:
    position = 0
    for arg in node.args:
        if arg.star:
            continue
        if arg.keyword is not None:
            if constraint.name is not None and arg.keyword.value == constraint.name:
                return arg
        else:
            if constraint.position is not None and position == constraint.position:
                return arg
            position += 1
    return None


def args_hold(names: Names, matcher: Matcher, node: cst.Call) -> bool:
    if matcher.arity is not None and len(node.args) != matcher.arity:
        return False
    if matcher.max_args is not None and not any(a.star for a in node.args) and sum(a.keyword is None for a in node.args) > matcher.max_args:
        return False
    for constraint in matcher.args:
        arg = _find_arg(node, constraint)
        if constraint.missing:
            if arg is not None or any(a.star for a in node.args):
                return False
            continue
        if arg is None:
            return False
        if constraint.value is not None:
            pattern = constraint.value
            values = _values(names, arg.value)
            if not values and constraint.any_expression:
                continue  # `autocast(args.fp16 and not args.bf16)`: no literal to exclude
            if not any(pattern.fullmatch(value) for value in values):
                return False
    return True


def keyword_holds(names: Names, matcher: Matcher, arg: cst.Arg, callees: tuple[str, ...], method: str | None) -> bool:
    if matcher.in_call or matcher.not_in_call:
        called = [*callees, *((f".{method}",) if method else ())]
        if matcher.in_call and not any(fnmatchcase(n, p) for n in called for p in matcher.in_call):
            return False
        if any(fnmatchcase(n, p) for n in called for p in matcher.not_in_call):
            return False
    if matcher.value is not None:
        pattern = matcher.value
        return any(pattern.fullmatch(value) for value in _values(names, arg.value))
    return True
