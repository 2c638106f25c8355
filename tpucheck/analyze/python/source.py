"""The Python analyzer: prefilter and screen, one libcst parse, one batched walk, targeted
positions (the package imports it on first use: libcst is a tenth of a second to import)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.dispatch import host_only_loads
from tpucheck.analyze.python.builds import tolerates_failed_build
from tpucheck.analyze.python.context import Guard
from tpucheck.analyze.python.device_indices import one_indexed_device
from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.nesting import (
    column_shifts,
    cpython_syntax_error,
    refusal,
)
from tpucheck.analyze.python.positions import node_ranges
from tpucheck.analyze.python.screen import screen
from tpucheck.analyze.python.walker import Hit, Walker
from tpucheck.findings import (
    RawMatch,
    Reason,
    Span,
    Suppression,
    normalize_snippet,
    parse_suppression,
)
from tpucheck.ruleset.model import Where
from tpucheck.ruleset.names import path_matches

# What this module defines; the package (`__init__.py`) re-exports it with the index's names.
__all__ = ["ParseFailure", "PythonAnalysis", "analyze_source", "find_suppressions", "parse_python"]

SNIPPET_LIMIT = 160


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


_ASYNC_ARGUMENT = re.compile(r"(?<=[(,\s])async(\s*=(?!=))")
"""`async=` as a keyword argument: Python 3.6 and older allowed it (`.cuda(async=True)`)."""
_ASYNC_RESPELLED = "asyn_"
"""What it is read as: the same length, so every offset stays where the text has it."""


class ParseFailure(Exception):
    """Source that cannot be turned into a tree: `kind` and a one-line message for the report."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _parse_error(text: str, exc: Exception) -> tuple[str, str]:
    if isinstance(exc, RecursionError):
        return "too-deep", "nesting too deep to analyze"
    if isinstance(exc, cst.ParserSyntaxError):
        nul = text.find("\0")
        if nul >= 0:  # libcst says "line 1" and CPython (3.11) gives no position at all
            line = text.count("\n", 0, nul) + 1
            return "syntax-error", f"syntax error at line {line}, column {nul - text.rfind(chr(10), 0, nul)}: a NUL byte (Python source cannot contain one)"
        first = str(exc.message).strip().splitlines()[0] if str(exc.message).strip() else "invalid syntax"
        where = f"line {exc.raw_line}, column {exc.raw_column + 1}"
        # libcst often points at the line after the mistake (or at line 1 for tokenizer
        # errors); CPython's position and wording are better, unless CPython stopped
        # earlier, which means at syntax newer than itself that libcst accepts.
        cpython = cpython_syntax_error(text)
        if cpython is not None and cpython[0] >= exc.raw_line - 1:
            line, column, message = cpython
            where, first = f"line {line}, column {column}", message.strip().splitlines()[0]
        if any(hint.search(text) for hint in _PY2_HINTS):
            return "python2", f"Python 2 syntax ({where}): {first}"
        return "syntax-error", f"syntax error at {where}: {first}"
    if isinstance(exc, UnicodeError):
        return "encoding", "text contains characters that cannot be encoded (unpaired surrogates)"
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return "parse-error", f"cannot parse: {type(exc).__name__}: {detail}"


def parse_python(text: str) -> cst.Module:
    """libcst's parse, made safe for any text: input that would crash the native parser or
    stall it for minutes is refused first, and every failure is a ParseFailure."""
    refused = refusal(text)
    if refused is not None:
        raise ParseFailure(*refused)
    return _parse(text)


def _parse(text: str) -> cst.Module:
    """libcst's parse of text already checked by `refusal`."""
    try:
        return cst.parse_module(text)
    except Exception as exc:  # libcst raises ParserSyntaxError, RecursionError, or a Rust panic
        raise ParseFailure(*_parse_error(text, exc)) from None
    except BaseException as exc:  # pyo3 PanicException derives from BaseException
        if type(exc).__name__ != "PanicException":
            raise
        raise ParseFailure("parse-error", "the parser failed on this file") from None


def analyze_source(text: str, index: PythonIndex, *, prefilter: bool = True, path: str = "") -> PythonAnalysis:
    """Analyze Python source text. Never raises for bad input: errors come back as data.
    `path` (relative, '/'-separated) is what matchers that name `files` are tested on.

    With `prefilter`, files that contain none of the rules' needles are not parsed, and
    the others go through the screen (screen.py): `ast` decides whether anything can
    match and which function bodies libcst need not parse. The matches are the same
    either way."""
    result = PythonAnalysis()
    if prefilter and not index.candidate(text):
        return result
    refused = refusal(text)
    if refused is not None:
        result.error_kind, result.error_message = refused
        return result
    parsed = text
    if prefilter:
        screened = screen(text, index)
        if screened.text is None:
            return result
        parsed = screened.text
    try:
        module = _parse(parsed)
    except ParseFailure as exc:
        if parsed is not text:  # the error, if any, is the whole file's
            return analyze_source(text, index, prefilter=False, path=path)
        if _ASYNC_ARGUMENT.search(text) and _ASYNC_RESPELLED not in text:
            # PyTorch 0.3's `x.cuda(async=True)`, a keyword only since Python 3.7 (audit BA:
            # Revisiting's train.py and test.py): read with the argument respelled in place,
            # offsets unchanged, and the snippets spelled back
            again = analyze_source(_ASYNC_ARGUMENT.sub(_ASYNC_RESPELLED + r"\1", text), index, prefilter=False, path=path)
            if again.parsed:
                again.matches = [replace(m, snippet=m.snippet.replace(_ASYNC_RESPELLED, "async")) for m in again.matches]
                return again
        result.error_kind, result.error_message = exc.kind, exc.message
        return result
    result.parsed = True
    try:
        result.matches = _matches(parsed, module, index, path, source=text)
    except RecursionError:
        result.error_kind, result.error_message = "too-deep", "nesting too deep to analyze"
    return result


def _matches(text: str, module: cst.Module, index: PythonIndex, path: str = "", *, source: str) -> list[RawMatch]:
    """The walk's hits as matches; `text` is what was parsed (perhaps hollowed by the screen),
    `source` the whole file."""
    hits = Walker(index).run(module, source)
    if not hits:
        return []
    evidence = {id(mark.node): mark.node for hit in hits for mark in (*_guards(hit), hit.role) if mark is not None}
    ranges = node_ranges(module, [hit.node for hit in hits] + [hit.start for hit in hits if hit.start is not None] + list(evidence.values()))
    quoted: dict[int, str] = {}
    # libcst drops a form feed that starts a statement line, and positions come from its
    # regenerated code: put the columns of such lines back where the text has them.
    shifts = column_shifts(text, module.code) if "\f" in text else {}
    matches: list[RawMatch] = []
    seen: set[tuple[str, int, int]] = set()
    tolerated: bool | None = None  # read once, when a rule asks
    host_lines: frozenset[int] | None = None
    one_device: bool | None = None  # read once, when a rule asks
    for hit in hits:
        line, column, end_line, end_column = ranges[id(hit.node)]
        if hit.start is not None:
            line, column = ranges[id(hit.start)][:2]
        if shifts:
            column = _shifted(shifts, line, column)
            end_column = _shifted(shifts, end_line, end_column)
        rule = hit.rule_matcher[0]
        rule_id = rule.id
        if hit.on_host or (hit.guard_test and rule.unless == "guard") or (hit.copy and rule.unless == "copy") or (hit.weights and rule.unless == "weights"):
            continue
        if rule.unless == "single-device":
            if one_device is None:
                one_device = one_indexed_device(source)
            if one_device:
                continue
        matcher = hit.rule_matcher[1]
        if matcher.files and not path_matches(path, matcher.files):
            continue
        if matcher.fatal and not hit.fatal:
            continue
        if matcher.not_inside and any(fnmatchcase(d, p) for d in hit.decorators for p in matcher.not_inside):
            continue
        severity = None
        reasons: list[Reason] = []
        if rule.where is not None and not _inside(rule.where, hit):
            if rule.where.otherwise == "skip":
                continue
            severity = rule.where.otherwise
            reasons.append(Reason(f"where.{rule.where.name or 'rule'}", f"{severity} outside {_place_words(rule.where)}"))
        if (hit.report and rule.category not in ("host-sync", "dynamic-shape", "unsupported-op")) or (hit.default and rule.category == "device-placement"):
            # a report (`print(torch.cuda.device_count())`) runs, and a default is the
            # callers' to override: no fail, a small edit at most
            capped = _at_most(severity or rule.severity, "minor")
            if capped != (severity or rule.severity):
                severity = capped
                reasons.append(Reason("place.report" if hit.report else "place.default", "in a print or log call: at most minor" if hit.report else "a parameter's default, which callers override: at most minor"))
        if rule.tolerated_build_at_most is not None and not matcher.fatal:  # an exit still stops the install
            if tolerated is None:
                tolerated = tolerates_failed_build(module)
            capped = _at_most(severity or rule.severity, rule.tolerated_build_at_most) if tolerated else severity or rule.severity
            if capped != (severity or rule.severity):
                severity = capped
                reasons.append(Reason("place.tolerated-build", f"the build script catches a failed extension build and installs without it: at most {capped}"))
        if rule.host_build_at_most is not None:
            if host_lines is None:
                host_lines = host_only_loads(source)
            capped = _at_most(severity or rule.severity, rule.host_build_at_most) if line in host_lines else severity or rule.severity
            if capped != (severity or rule.severity):
                severity = capped
                reasons.append(Reason("place.host-build", f"the build compiles C/C++ sources only, with the host's compiler: its ops take CPU tensors, a detour to the host: at most {capped}"))
        if hit.scalars and rule.scalars_at_most is not None:
            capped = _at_most(severity or rule.severity, rule.scalars_at_most)
            if capped != (severity or rule.severity):
                severity = capped
                reasons.append(Reason("place.scalars", f"a tensor of a few literal scalars (a counter): at most {capped}"))
        key = (rule_id, line, column)
        if key in seen:
            continue
        seen.add(key)
        snippet = normalize_snippet(module.code_for_node(hit.node))
        if len(snippet) > SNIPPET_LIMIT:
            snippet = snippet[: SNIPPET_LIMIT - 1] + "…"
        matches.append(
            RawMatch(
                rule_id=rule_id,
                span=Span(line, column + 1, end_line, end_column + 1),
                snippet=snippet,
                guarded=hit.guarded,
                detail=hit.detail,
                severity=severity,
                role=hit.role.role if hit.role is not None else None,
                reasons=(*(_evidence(module, mark.rule, mark.node, ranges, quoted) for mark in (*_guards(hit), hit.role) if mark is not None), *reasons),
            )
        )
    return matches


EVIDENCE_LIMIT = 80


def _guards(hit: Hit) -> tuple[Guard, ...]:
    return hit.guard.marks() if hit.guard is not None else ()


def _evidence(module: cst.Module, rule: str, node: cst.CSTNode, ranges: dict[int, tuple[int, int, int, int]], quoted: dict[int, str]) -> Reason:
    """The first line of the code that decided a guard or a role (`if torch.cuda.is_available():`
    reads `torch.cuda.is_available()`; an except clause its first line), and where it is."""
    text = quoted.get(id(node))
    if text is None:
        code = module.code_for_node(node).strip()
        first = code.splitlines()[0].strip() if code else ""
        text = normalize_snippet(first)
        if len(text) > EVIDENCE_LIMIT:
            text = text[: EVIDENCE_LIMIT - 1] + "…"
        quoted[id(node)] = text = f"`{text}`"
    return Reason(rule, text, ranges[id(node)][0])


def _place_words(where: Where) -> str:
    parts = (["loops"] if where.loop else []) + (["the module's top level"] if where.module else []) + (["a check whose other side raises"] if where.fatal else []) + [f"{', '.join(where.functions)}"] * bool(where.functions) + [
        f"functions decorated {', '.join(where.decorated)}"
    ] * bool(where.decorated)
    return " or ".join(parts) if parts else "its place"


def _at_most(severity: str, cap: str) -> str:
    order = ("blocker", "major", "minor", "info")
    return order[max(order.index(severity), order.index(cap))]


def _shifted(shifts: dict[int, tuple[int, int]], line: int, column: int) -> int:
    start, shift = shifts.get(line, (0, 0))
    return column + shift if column >= start else column


def _inside(where: Where, hit: Hit) -> bool:
    if hit.periodic:  # `if step % N == 0:` runs once every N steps: not per-step code
        return False
    if hit.output:  # `Image.fromarray(x.cpu().numpy())`: how a result leaves the device
        return False
    if where.loop and hit.in_loop:
        return True
    if where.module and not hit.functions:
        return True
    if where.fatal and hit.fatal:
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
