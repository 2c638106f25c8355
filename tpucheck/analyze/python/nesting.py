"""What must be decided about Python source before libcst sees it, and after it has.

libcst's native parser is a recursive-descent parser running on the C stack of the
calling thread. Nesting it cannot handle does not raise: past a few thousand levels
(`lambda: lambda: ...` at ~3,500, brackets at ~800) it overflows the stack and the
whole process dies with SIGSEGV, taking every other file of the scan with it. Below
that, deep chains are merely slow (5,000 chained `+` take 40 s; 5,000 chained `[0]`
five minutes), and the tree it returns is then too deep for our own walker anyway
(Python's recursion limit stops it at roughly 330-490 levels). So a file whose nesting
certainly exceeds what the walker can take is refused *before* parsing, with a reason,
at a cost of about 2% of a parse.

After parsing, libcst's regenerated code can differ from the text in one known way:
it drops a form feed at the start of a statement line. Positions are computed from the
regenerated code, so such lines need their columns shifted back.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from itertools import accumulate

__all__ = [
    "MAX_BRACKET_DEPTH",
    "MAX_EXPRESSION_DEPTH",
    "Nesting",
    "bracket_depth",
    "column_shifts",
    "cpython_syntax_error",
    "expression_nesting",
    "refusal",
]

MAX_BRACKET_DEPTH = 200
"""CPython refuses deeper nesting ("too many nested parentheses"); libcst's native parser
overflows its stack somewhere past 800 and takes the whole process down, so such a file
is refused before it reaches the parser."""

MAX_EXPRESSION_DEPTH = 300
"""Refuse when `expression_nesting` exceeds this. The estimate is an upper bound within
about a factor of two of the real depth, and the walker gives up (RecursionError) on
real depths of 330-490 depending on the construct, so a refused file is one that could
almost never have been analyzed, and an accepted one is never deep enough to crash or
stall the parser. The deepest estimate in ~3,100 real files (the Python standard
library and a virtualenv's site-packages) is 82 chained `+` in a generated table."""

_BRACKETS = str.maketrans({c: None for c in map(chr, range(128)) if c not in "()[]{}"})
_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def bracket_depth(text: str) -> int:
    """Maximum bracket nesting, counting brackets in strings and comments too (an upper bound)."""
    brackets = text.translate(_BRACKETS)
    brackets = "".join(c for c in brackets if c in _DEPTH) if not brackets.isascii() else brackets
    return max(accumulate(map(_DEPTH.__getitem__, brackets)), default=0)


# Everything whose characters must not count: comments, string literals (all quote forms;
# prefixes are letters and vanish below), numbers (`1.5e-3` is not an attribute access
# and a subtraction), backslash continuations (not a statement end). Keywords that nest
# an expression become one operator character.
_OPAQUE = re.compile(
    r"""
    (?P<comment>\#[^\r\n]*)
    | (?P<continuation>\\\r?\n|\\\r)
    | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z) | \"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|\Z)
               | '(?:[^'\\\r\n]|\\.)*'? | "(?:[^"\\\r\n]|\\.)*"?)
    | (?P<number>\b\d[\w.]*)
    | (?P<keyword>\b(?:not|lambda|await|if|else|and|or|in|is|yield)\b)
    """,
    re.VERBOSE | re.DOTALL,
)
_OPERATORS = "-+*/%@&|^~<>."
_KEEP = frozenset("()[]{},;\n\v" + _OPERATORS)
_DROP = str.maketrans({c: None for c in map(chr, range(128)) if c not in _KEEP})


def _opaque(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "keyword":
        return "~"
    if kind == "continuation":
        return "\v"  # a line break that does not end the statement
    if kind == "string":
        return "\v" * match.group().count("\n")
    return ""


@dataclass(frozen=True, slots=True)
class Nesting:
    depth: int
    """Upper bound of the expression nesting (operators chained in one element, plus
    chained trailers such as `f()()` and `a[0][0]`, plus brackets)."""
    line: int
    """Where the deepest element is."""
    unclosed: int | None
    """Line of the first bracket never closed, if any: then the file is a syntax error,
    and the estimate is meaningless past it (newlines stopped ending statements)."""


def expression_nesting(text: str) -> Nesting:
    """How deep libcst's parser would have to recurse, estimated from characters.

    An element is what lies between separators (`,` `;` and, outside brackets, line
    ends); every operator, dot and nesting keyword in an element adds one level, a
    bracket adds one and its contents start from there, and a bracket that directly
    follows a closing one (`f()()`, `a[0][0]`) adds one more, because trailers nest.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    compact = _OPAQUE.sub(_opaque, text).translate(_DROP)
    if not compact.isascii():
        compact = "".join(c for c in compact if c in _KEEP)
    best = best_line = 0
    line = 1
    base = cur = 0
    stack: list[tuple[int, int, int]] = []
    previous = ""
    for char in compact:
        if char in "([{":
            cur += 1 + (previous in ")]}")
            if cur > best:
                best, best_line = cur, line
            stack.append((base, cur, line))
            base = cur
        elif char in ")]}":
            if stack:
                base, cur, _ = stack.pop()
        elif char == "\n":
            line += 1
            if not stack:
                cur = 0
        elif char == "\v":
            line += 1
        elif char in ",;":
            cur = base
        else:
            cur += 1
            if cur > best:
                best, best_line = cur, line
        previous = char
    return Nesting(best, best_line, stack[0][2] if stack else None)


def refusal(text: str) -> tuple[str, str] | None:
    """(error kind, one-line message) when the file must not reach libcst's parser."""
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        return "too-deep", f"brackets nested more than {MAX_BRACKET_DEPTH} deep: not analyzed"
    nesting = expression_nesting(text)
    if nesting.depth <= MAX_EXPRESSION_DEPTH:
        return None
    if nesting.unclosed is not None:
        return "syntax-error", f"syntax error at line {nesting.unclosed}: a bracket opened here is never closed"
    return "too-deep", f"expression nested more than {MAX_EXPRESSION_DEPTH} deep (line {nesting.line}): not analyzed"


def cpython_syntax_error(text: str) -> tuple[int, int, str] | None:
    """(line, 1-based column, message) of CPython's own syntax error, or None.

    Only asked once libcst has refused a file: CPython's messages ("Missing parentheses
    in call to 'print'") and positions are better than libcst's, which often point at
    the line after the error. Compiling to an AST only: nothing is executed.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<source>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if exc.lineno is None or not exc.msg:
            return None
        return exc.lineno, exc.offset or 1, exc.msg
    except (ValueError, MemoryError, RecursionError, OverflowError):  # NUL bytes on 3.11; too deep
        return None
    return None


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_INDENT_CHARS = " \t\f"


def column_shifts(text: str, generated: str) -> dict[int, tuple[int, int]]:
    """Line -> (first 0-based column affected, shift) where libcst's code differs from the
    text only in leading whitespace (a dropped form feed). Lines are split on real line
    breaks only: `str.splitlines` would also split on the form feed itself."""
    if generated == text:
        return {}
    original = _LINE_BREAK.split(text)
    regenerated = _LINE_BREAK.split(generated)
    if original and original[-1] == "":
        original.pop()
    if regenerated and regenerated[-1] == "":
        regenerated.pop()
    if len(original) != len(regenerated):
        return {}
    shifts: dict[int, tuple[int, int]] = {}
    for number, (mine, theirs) in enumerate(zip(original, regenerated), start=1):
        if mine == theirs:
            continue
        body = mine.lstrip(_INDENT_CHARS)
        if body != theirs.lstrip(_INDENT_CHARS):
            continue
        lead_mine = len(mine) - len(body)
        lead_theirs = len(theirs) - len(body)
        if lead_mine != lead_theirs:
            shifts[number] = (lead_theirs, lead_mine - lead_theirs)
    return shifts
