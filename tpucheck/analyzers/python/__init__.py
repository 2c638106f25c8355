"""The Python analyzer: prefilter, one libcst parse, one batched walk, targeted positions."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from itertools import accumulate

import libcst as cst

from tpucheck.analyzers.python.index import PythonIndex, build_python_index
from tpucheck.analyzers.python.positions import node_ranges
from tpucheck.analyzers.python.walker import Hit, Walker
from tpucheck.findings import (
    RawMatch,
    Span,
    Suppression,
    normalize_snippet,
    parse_suppression,
)
from tpucheck.ruleset.model import Where

__all__ = ["PythonAnalysis", "PythonIndex", "analyze_source", "build_python_index", "find_suppressions"]

SNIPPET_LIMIT = 160
MAX_BRACKET_DEPTH = 200
"""CPython refuses deeper nesting ("too many nested parentheses"); libcst's native parser
overflows its stack somewhere past 800 and takes the whole process down, so such a file
is refused before it reaches the parser."""

_BRACKETS = str.maketrans({c: None for c in map(chr, range(128)) if c not in "()[]{}"})
_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def bracket_depth(text: str) -> int:
    """Maximum bracket nesting, counting brackets in strings and comments too (an upper bound)."""
    brackets = text.translate(_BRACKETS)
    brackets = "".join(c for c in brackets if c in _DEPTH) if not brackets.isascii() else brackets
    return max(accumulate(map(_DEPTH.__getitem__, brackets)), default=0)


@dataclass(slots=True)
class PythonAnalysis:
    matches: list[RawMatch] = field(default_factory=list)
    parsed: bool = False
    error_kind: str | None = None
    error_message: str | None = None


_PY2_HINTS = (
    re.compile(r"^\s*print\s+[^\s(=.,)\[]", re.M),
    re.compile(r"^\s*except\s+[\w.]+\s*,\s*\w+\s*:", re.M),
    re.compile(r"^\s*exec\s+['\"]", re.M),
    re.compile(r"\bur['\"]"),
)


def _parse_error(text: str, exc: Exception) -> tuple[str, str]:
    if isinstance(exc, RecursionError):
        return "too-deep", "nesting too deep to analyze"
    if isinstance(exc, cst.ParserSyntaxError):
        first = str(exc.message).strip().splitlines()[0] if str(exc.message).strip() else "invalid syntax"
        where = f"line {exc.raw_line}, column {exc.raw_column + 1}"
        if any(hint.search(text) for hint in _PY2_HINTS):
            return "python2", f"Python 2 syntax ({where}): {first}"
        return "syntax-error", f"syntax error at {where}: {first}"
    return "parse-error", f"cannot parse: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


def analyze_source(text: str, index: PythonIndex, *, prefilter: bool = True) -> PythonAnalysis:
    """Analyze Python source text. Never raises for bad input: errors come back as data."""
    result = PythonAnalysis()
    if prefilter and not index.candidate(text):
        return result
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        result.error_kind = "too-deep"
        result.error_message = f"brackets nested more than {MAX_BRACKET_DEPTH} deep: not analyzed"
        return result
    try:
        module = cst.parse_module(text)
    except Exception as exc:  # libcst raises ParserSyntaxError, RecursionError, or a Rust panic
        result.error_kind, result.error_message = _parse_error(text, exc)
        return result
    except BaseException as exc:  # pyo3 PanicException derives from BaseException
        if type(exc).__name__ != "PanicException":
            raise
        result.error_kind, result.error_message = "parse-error", "the parser failed on this file"
        return result
    result.parsed = True
    try:
        hits = Walker(index).run(module)
        ranges = node_ranges(module, [hit.node for hit in hits] + [hit.start for hit in hits if hit.start is not None]) if hits else {}
    except RecursionError:
        result.error_kind, result.error_message = "too-deep", "nesting too deep to analyze"
        return result
    seen: set[tuple[str, int, int]] = set()
    for hit in hits:
        line, column, end_line, end_column = ranges[id(hit.node)]
        if hit.start is not None:
            line, column = ranges[id(hit.start)][:2]
        rule = hit.rule_matcher[0]
        rule_id = rule.id
        severity = None
        if rule.where is not None and not _inside(rule.where, hit):
            if rule.where.otherwise == "skip":
                continue
            severity = rule.where.otherwise
        key = (rule_id, line, column)
        if key in seen:
            continue
        seen.add(key)
        snippet = normalize_snippet(module.code_for_node(hit.node))
        if len(snippet) > SNIPPET_LIMIT:
            snippet = snippet[: SNIPPET_LIMIT - 1] + "…"
        result.matches.append(
            RawMatch(
                rule_id=rule_id,
                span=Span(line, column + 1, end_line, end_column + 1),
                snippet=snippet,
                guarded=hit.guarded,
                detail=hit.detail,
                severity=severity,
            )
        )
    return result


def _inside(where: Where, hit: Hit) -> bool:
    if where.loop and hit.in_loop:
        return True
    if where.functions and any(fnmatchcase(f, p) for f in hit.functions for p in where.functions):
        return True
    return bool(where.decorated) and any(fnmatchcase(d, p) for d in hit.decorators for p in where.decorated)


_DIRECTIVE = re.compile(r"#\s*tpucheck:")


def find_suppressions(text: str) -> dict[int, Suppression]:
    """`# tpucheck: ignore[...]` comments by line; only real comments count, not strings."""
    if "tpucheck:" not in text:
        return {}
    found: dict[int, Suppression] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and _DIRECTIVE.search(token.string):
                suppression = parse_suppression(token.string)
                if suppression is not None:
                    found[token.start[0]] = suppression
    except (tokenize.TokenError, SyntaxError, IndentationError):
        for number, line in enumerate(text.splitlines(), start=1):
            hash_at = line.find("#")
            if hash_at >= 0 and _DIRECTIVE.search(line, hash_at):
                suppression = parse_suppression(line[hash_at:])
                if suppression is not None:
                    found[number] = suppression
    return found
