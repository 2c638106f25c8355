"""Which lines sit on the true side of a test that holds only off a setting's default: the
one reading `option_imports.py` (imports used only behind an option) and
`option_components.py` (definitions used only so) share.

Line by line, as `imports.py` reads: an `if`/`elif` whose test is a setting the project
declares off by default (`if args.use_vllm:`, `if cfg.use_x:`), or a comparison of a
setting with literals that none of its declared values satisfies (`elif radial_type ==
"chebyshev":`), holds the lines of its true side; an `else` side holds nothing, and the
nearest enclosing test decides. One pass over a module's lines, with a stack of the lines
enclosing the current one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tpucheck.analyze.imports import canonical_literal
from tpucheck.analyze.python.options import number, zero

__all__ = ["OTHER", "TEST", "Behind", "compared_items", "tests_around"]

OTHER = "another value"
"""Closes a setting's values when they are the literals the product gives it and whatever
else a caller outside it may pass (analyze/unpassed.py): no test of it holds by default."""

Behind = tuple[str, str]
"""(the setting, the test with the setting's default as evidence)."""

TEST = re.compile(r"^[ \t]*(?:el)?if[ \t(]+(.*?)[ \t)]*:[ \t]*(?:#.*)?$")
"""A one-line `if`/`elif` header; group 1 is its test."""
_FLAG = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)$")
_COMPARED = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)[ \t]*(==|!=|not[ \t]+in|in|>(?!=))[ \t]*(.+)$")
_HEADER = re.compile(r"^[ \t]*(?:el)?if\b|^[ \t]*else[ \t]*:")
_LITERAL = re.compile(r"""^(?:"[^"\n]*"|'[^'\n]*'|-?\d+(?:\.\d+)?|True|False|None)$""")


def tests_around(lines: list[str], off: Mapping[str, str], values: Mapping[str, tuple[tuple[str, ...], str]]) -> list[Behind | None]:
    """For each line, the setting and the test (as evidence) of the nearest enclosing
    `if`/`elif` whose true side holds it and that holds only off a setting's default; None when the line is on
    an `else` side, outside any branch, or the enclosing branches test something else. One
    pass: the lines enclosing the current one (each at a lower indent than the last) are
    kept on a stack."""
    stack: list[tuple[int, str, Behind | None]] = []  # (indent, kind, what the test holds behind it)
    out: list[Behind | None] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            out.append(out[-1] if out else None)  # a blank line: as the line before
            continue
        indent = _indent(line)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.append(_answer(stack))
        if _HEADER.match(line) is None:
            stack.append((indent, "other", None))
        elif stripped.startswith("else"):
            stack.append((indent, "else", None))
        else:
            test = TEST.match(line)
            stack.append((indent, "test", _off_test(test.group(1).strip(), off, values) if test is not None else None))
    return out


def _answer(stack: list[tuple[int, str, Behind | None]]) -> Behind | None:
    """What the upward walk over the enclosing lines finds (innermost first)."""
    for indent, kind, evidence in reversed(stack):
        if kind == "else":
            return None
        if kind == "test" and evidence is not None:
            return evidence
        if indent == 0:
            return None
    return None


def _off_test(test: str, off: Mapping[str, str], values: Mapping[str, tuple[tuple[str, ...], str]]) -> Behind | None:
    """`cfg.use_x` (a flag off by default) or `radial_type == "chebyshev"` (no declared value
    satisfies it): the setting and the test as evidence; None for any other test."""
    flag = _FLAG.match(test)
    if flag is not None and flag.group(1) in off:
        return flag.group(1), f"`{test}` (`{flag.group(1)}` is off by default, {off[flag.group(1)]})"
    compared = compared_items(test)
    if compared is None or compared[1] not in values:
        return None
    _, name, operator, items = compared
    literals = [canonical_literal(i) for i in items]
    if operator == ">" and not zero(literals):
        return None  # `world_size > 1` tests a size, not a switch (options.zero)
    declared, where = values[name]
    holds = {"==": lambda v: v in literals[:1], "!=": lambda v: v not in literals[:1], "in": lambda v: v in literals, "not in": lambda v: v not in literals, ">": _above_zero}[operator]
    if any(holds(v) for v in declared):
        return None
    if declared and declared[-1] == OTHER:  # a value nothing in the product gives (analyze/unpassed.py)
        return name, f"`{test}` ({where})"
    return name, f"`{test}` (`{name}` is {' or '.join(declared)} wherever the project sets it, {where})"


def compared_items(test: str) -> tuple[str, str, str, list[str]] | None:
    """`cfg.loss in ("l1", "l2")` -> (`cfg.loss`, `loss`, `in`, [`"l1"`, `"l2"`]): the
    subject as written, the setting's name, the operator and the literals as written; None
    where the test is no comparison of a setting with literals."""
    compared = _COMPARED.match(test)
    if compared is None:
        return None
    right = compared.group(3).strip()
    items = [p.strip() for p in right.strip("[]()").split(",") if p.strip()] if right[:1] in "[(" else [right]
    if not items or not all(_LITERAL.match(i) for i in items):
        return None
    subject = test[: compared.start(2)].strip()
    return subject, compared.group(1), " ".join(compared.group(2).split()), items


def _above_zero(value: str) -> bool:
    """Whether `setting > 0` holds at a declared value; a value that is no number might."""
    found = number(value)
    return found is None or found > 0


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
