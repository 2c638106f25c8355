"""Classes and functions the product uses only behind an option its default leaves off.

Why: a library builds one of several implementations by a setting (`if radial_type ==
"bessel": ... elif radial_type == "chebyshev": self.basis = ChebychevBasis(...)`, with
`--radial_type` defaulting to "bessel"; a guidance potential built only under
`--use_tfg_guidance`). A missing op inside the chosen-by-option class is reached only by
users who change the setting: the main path never builds it (audit AX: MACE's Chebyshev
basis and Protenix's guidance potentials, both blockers judged major). The same reading as
`option_imports.py` for imports, applied to the project's own top-level definitions, across
its modules.

Read line by line: a top-level `class`/`def` (to the next statement at column 0); every
line outside it, in any product module, where its name is used as a whole word (imports,
`__all__`, comments and one-line strings aside) must sit on the true side of an `if`/`elif`
that tests a setting the project declares off by default (`if cfg.use_x:`), or compares a
setting with literals none of its declared values satisfies (`elif radial_type ==
"chebyshev":`); at least one use, and none on an `else` side. A name defined twice, or used
nowhere, settles nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from tpucheck.analyze.imports import canonical_literal
from tpucheck.analyze.top_names import code_lines, definition_end

__all__ = ["OPTION_COMPONENT", "option_components"]

OPTION_COMPONENT = "severity.option-only-component"
Component = tuple[str, int, int, str]
"""(name, first line, last line, the test and the setting's declared values, as evidence)."""

_DEFINITION = re.compile(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)")
_TEST = re.compile(r"^[ \t]*(?:el)?if[ \t(]+(.*?)[ \t)]*:[ \t]*(?:#.*)?$")
_FLAG = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)$")
_COMPARED = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)[ \t]*(==|!=|not[ \t]+in|in)[ \t]*(.+)$")
_HEADER = re.compile(r"^[ \t]*(?:el)?if\b|^[ \t]*else[ \t]*:")
_LITERAL = re.compile(r"""^(?:"[^"\n]*"|'[^'\n]*'|-?\d+(?:\.\d+)?|True|False|None)$""")


def option_components(
    product: Iterable[str],
    read: Callable[[str], str | None],
    off: Mapping[str, str],
    values: Mapping[str, tuple[tuple[str, ...], str]],
) -> dict[str, tuple[Component, ...]]:
    """Product module -> its top-level definitions that every use sits behind an option
    its default leaves off. Linear in the product's text: each module's lines are read
    once for the tests around them, and names are looked up in one index of words."""
    if not off and not values:
        return {}
    lines: dict[str, list[str]] = {}
    behind: dict[str, list[str | None]] = {}
    words: dict[str, dict[str, list[int]]] = {}  # path -> word -> the code lines using it
    behind_words: set[str] = set()
    for path in sorted(product):
        text = read(path) or ""
        lines[path] = text.splitlines()
        behind[path] = _tests_around(lines[path], off, values)
        found: dict[str, list[int]] = {}
        for number, code in code_lines(text):
            for word in _WORD.findall(code):
                found.setdefault(word, []).append(number)
                if behind[path][number - 1] is not None:
                    behind_words.add(word)
        words[path] = found
    if not behind_words:
        return {}
    defined: dict[str, list[tuple[str, int, int]]] = {}
    for path, text_lines in lines.items():
        for name, start, end in _definitions(text_lines):
            if name in behind_words:
                defined.setdefault(name, []).append((path, start, end))
    out: dict[str, list[Component]] = {}
    for name, places in sorted(defined.items()):
        if len(places) != 1:
            continue
        home, start, end = places[0]
        evidence: list[str] = []
        settled = True
        for path, found in words.items():
            for number in sorted(set(found.get(name, ()))):
                if path == home and start <= number <= end:
                    continue  # its own body (a recursive call, its `class` line)
                why = behind[path][number - 1]
                if why is None:
                    settled = False
                    break
                evidence.append(f"{why} at {path}:{number}")
            if not settled:
                break
        if settled and evidence:
            out.setdefault(home, []).append((name, start, end, evidence[0]))
    return {path: tuple(found) for path, found in sorted(out.items())}


_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
"""A name used as a whole word, not an attribute (`x.name`)."""


def _definitions(lines: list[str]) -> Iterable[tuple[str, int, int]]:
    """(name, first line, last line) of each top-level class or function (decorators
    included above it)."""
    index = 0
    while index < len(lines):
        found = _DEFINITION.match(lines[index])
        if found is None:
            index += 1
            continue
        start = index
        while start > 0 and lines[start - 1].startswith("@"):
            start -= 1
        end = definition_end(lines, index)
        yield found.group(1), start + 1, end + 1
        index = end + 1


def _tests_around(lines: list[str], off: Mapping[str, str], values: Mapping[str, tuple[tuple[str, ...], str]]) -> list[str | None]:
    """For each line, the test of the nearest enclosing `if`/`elif` whose true side holds
    it and that holds only off a setting's default, as evidence; None when the line is on
    an `else` side, outside any branch, or the enclosing branches test something else. One
    pass: the lines enclosing the current one (each at a lower indent than the last) are
    kept on a stack."""
    stack: list[tuple[int, str, str | None]] = []  # (indent, kind, evidence)
    out: list[str | None] = []
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
            test = _TEST.match(line)
            stack.append((indent, "test", _off_test(test.group(1).strip(), off, values) if test is not None else None))
    return out


def _answer(stack: list[tuple[int, str, str | None]]) -> str | None:
    """What the upward walk over the enclosing lines finds (innermost first)."""
    for indent, kind, evidence in reversed(stack):
        if kind == "else":
            return None
        if kind == "test" and evidence is not None:
            return evidence
        if indent == 0:
            return None
    return None


def _off_test(test: str, off: Mapping[str, str], values: Mapping[str, tuple[tuple[str, ...], str]]) -> str | None:
    """`cfg.use_x` (a flag off by default) or `radial_type == "chebyshev"` (no declared value
    satisfies it), as evidence; None for any other test."""
    flag = _FLAG.match(test)
    if flag is not None and flag.group(1) in off:
        return f"`{test}` (`{flag.group(1)}` is off by default, {off[flag.group(1)]})"
    compared = _COMPARED.match(test)
    if compared is None or compared.group(1) not in values:
        return None
    name, operator, right = compared.group(1), " ".join(compared.group(2).split()), compared.group(3).strip()
    items = [p.strip() for p in right.strip("[]()").split(",") if p.strip()] if right[:1] in "[(" else [right]
    if not items or not all(_LITERAL.match(i) for i in items):
        return None
    literals = [canonical_literal(i) for i in items]
    declared, where = values[name]
    holds = {"==": lambda v: v in literals[:1], "!=": lambda v: v not in literals[:1], "in": lambda v: v in literals, "not in": lambda v: v not in literals}[operator]
    if any(holds(v) for v in declared):
        return None
    return f"`{test}` (`{name}` is {' or '.join(declared)} wherever the project sets it, {where})"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))

