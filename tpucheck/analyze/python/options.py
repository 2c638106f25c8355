"""Options: settings a user turns on or leaves at their default, read from the code that
declares them (a parameter's literal default, a `store_true` flag, a config field) and
from the tests that read them. An option off by default keeps the code it turns on
optional; an if whose two sides do the same job, one of them with no CUDA-ism, keeps the
CUDA side as a fallback. Functions of (node, `Names`) that return facts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.scope import dotted


def option_polarity(names: Names, test: cst.BaseExpression) -> int:
    """+1 when the test holds only when an option off by default is turned on (`if
    args.fp16:` with `--fp16` a store_true flag, `if use_triton:` with `use_triton=False`,
    `if training_args.bits in [4, 8]:` with `bits: int = 16`), -1 when it holds only while
    the option is left at its default: the side it takes at the default is the product's
    main path."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return -option_polarity(names, test.expression)
    if isinstance(test, cst.BooleanOperation):
        left, right = option_polarity(names, test.left), option_polarity(names, test.right)
        if isinstance(test.operator, cst.And):
            return 1 if 1 in (left, right) else 0
        return 1 if left == right == 1 else -1 if -1 in (left, right) and 1 not in (left, right) else 0
    default = _option_default(names, test)
    if default is not None:
        return 1 if default in names.index.guards.option_defaults else 0
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        for subject, other in ((test.left, comparison.comparator), (comparison.comparator, test.left)):
            default = _option_default(names, subject)
            values = _literals(other)
            if default is None or default == "None" or values is None:
                continue
            holds = _holds(comparison.operator, default, values)
            if holds is not None:
                return -1 if holds else 1
    return 0


def flag_name(test: cst.BaseExpression, *, turned_on: bool) -> str | None:
    """The setting a test reads when it is a bare flag: `cfg.use_qlora` holds when the flag
    is on (`turned_on`), `not cfg.use_qlora` when it is off. The name is what the project's
    declarations are looked up by (`use_qlora: bool = False` in another module)."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    if negated == turned_on:
        return None
    subject = test.expression if isinstance(test, cst.UnaryOperation) else test
    if isinstance(subject, cst.Call) and not subject.args:
        # `model_management.xformers_enabled()`: an availability check defined elsewhere
        # (analyze/checks.py), looked up as `xformers_enabled()`
        parts = dotted(subject.func)
        return f"{parts[-1]}()" if parts is not None and len(parts) <= 3 else None
    parts = dotted(subject)
    return parts[-1] if parts is not None and _setting_path(parts) else None


def _setting_path(parts: Sequence[str]) -> bool:
    """A setting read off an object (`args.fp16`, `cfg.model.use_x`), or a key of a config
    tree at any depth (`cfg.MODEL.HEAD.MORE_POS`); a longer path is no setting."""
    return len(parts) <= 3 or parts[-1].isupper()


def compared_setting(test: cst.BaseExpression) -> tuple[str, Callable[[str], bool]] | None:
    """`training_args.bits in [4, 8]`, `args.loss == "l1"`: a setting compared with
    literals, which the project's declared default decides (judge/settings.py): the
    setting's name and whether the test holds at a default (literal code, as
    `ImportFacts.options` writes it); None for any other test."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    parts = dotted(test.left)
    values = _literals(comparison.comparator)
    operator = comparison.operator
    if parts is None or not _setting_path(parts) or values is None or "None" in values:
        return None
    if not isinstance(operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) and not (isinstance(operator, cst.GreaterThan) and zero(values)):
        return None
    return parts[-1], lambda default: _holds(operator, default, values) is not False


def plain_flag(test: cst.BaseExpression) -> bool:
    """A test of a setting, not of the machine: a name or attribute, negated, compared
    with literals, or several of those (`cfg.use_xformers`, `not args.fp32`, `mode == "fast"`)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return plain_flag(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return plain_flag(test.left) and plain_flag(test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        return plain_flag(test.left) and _literals(test.comparisons[0].comparator) is not None
    return dotted(test) is not None


def alternatives(node: cst.If) -> bool:
    """Whether the two sides of an if do the same job two ways: they bind a name in common
    (`out = flash(q) / out = sdpa(q)`), or both end by returning a value."""
    orelse = node.orelse
    if not isinstance(orelse, cst.Else):
        return False
    body, other = node.body.body, orelse.body.body
    if _returns_value(body) and _returns_value(other):
        return True
    return bool(_bound(body) & _bound(other))


def _returns_value(statements: Sequence[cst.CSTNode]) -> bool:
    if not statements:
        return False
    last = statements[-1]
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return any(isinstance(small, cst.Return) and small.value is not None for small in smalls)


def _bound(statements: Sequence[cst.CSTNode]) -> set[str]:
    names: set[str] = set()
    for statement in statements:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            targets = (
                [t.target for t in small.targets] if isinstance(small, cst.Assign)
                else [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
            )  # fmt: skip
            for target in targets:
                parts = dotted(target)
                if parts is not None:
                    names.add(".".join(parts))
    return names


def field_default(value: cst.BaseExpression) -> cst.BaseExpression:
    """A class field's default: the value itself, or `field(default=...)`'s."""
    if isinstance(value, cst.Call):
        for arg in value.args:
            if arg.keyword is not None and arg.keyword.value == "default":
                return arg.value
    return value


def declared_default(names: Names, test: cst.BaseExpression) -> str | None:
    """The default this module declares for a bare flag's setting (`use_gt_scale=True` in
    the enclosing signature), or None: a setting the module declares is read here, not
    looked up in the project's other declarations of that name (audit BA: packnet-sfm's
    `use_gt_scale`, a store_true flag in a side script, on by default where it is tested)."""
    subject = test.expression if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) else test
    parts = dotted(subject)
    return names.options.get(parts[-1]) if parts is not None else None


def _option_default(names: Names, node: cst.BaseExpression) -> str | None:
    parts = dotted(node)
    if parts is None:
        return None
    return names.options.get(parts[-1], names.index.guards.known_options.get(parts[-1]))


def _literals(node: cst.BaseExpression) -> list[str] | None:
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        found = [literal_code(e.value) for e in node.elements]
        return None if any(f is None for f in found) else [f for f in found if f is not None]
    code = literal_code(node)
    return None if code is None else [code]


def literal_code(node: cst.BaseExpression) -> str | None:
    """A literal's canonical code (`False`, `16`, `'fp32'`), or None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return node.value
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.value
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return repr(value) if isinstance(value, str) else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return "-" + node.expression.value
    return None


def zero(values: Sequence[str]) -> bool:
    """A comparison with the literal zero alone: `weight > 0` turns a term on only where
    the setting is set above its zero default (a loss weight, a count of extra steps). Any
    other threshold (`world_size > 1`) is a size, not a switch."""
    return len(values) == 1 and values[0] in ("0", "0.0")


def number(code: str) -> float | None:
    """A numeric literal's value, or None."""
    try:
        return float(code)
    except ValueError:
        return None


def _holds(operator: cst.BaseCompOp, default: str, values: list[str]) -> bool | None:
    if isinstance(operator, cst.GreaterThan):
        value = number(default)
        return None if value is None or not zero(values) else value > 0
    if isinstance(operator, (cst.Equal, cst.Is)):
        return len(values) == 1 and default == values[0]
    if isinstance(operator, (cst.NotEqual, cst.IsNot)):
        return len(values) == 1 and default != values[0]
    if isinstance(operator, cst.In):
        return default in values
    if isinstance(operator, cst.NotIn):
        return default not in values
    return None
