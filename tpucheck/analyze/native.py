"""C, C++ and CUDA sources: regexes over the code with comments and literals blanked.

A kernel library is the largest single cost of a migration, so `__global__` kernels,
`<<<...>>>` launches and CUDA includes must be found; and prose in comments (which
kernel authors write a lot of) must never count. Blanking keeps every offset, so
positions stay exact.
"""

from __future__ import annotations

import re

from tpucheck.discover.textpos import NEWLINES_ONLY, LineIndex
from tpucheck.findings import RawMatch, Reason, normalize_snippet
from tpucheck.ruleset.model import Rule
from tpucheck.ruleset.names import path_matches

_TOKENS = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""",
    re.S,
)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*("[^"\n]*"|<[^>\n]*>)', re.M)


def blank_comments(text: str) -> str:
    """Replace comments and string/char literals with spaces, keeping newlines and offsets.

    `#include "cuda_runtime.h"` keeps its quoted path: includes are what rules look for.
    """
    keep = {m.start(1): m.end(1) for m in _INCLUDE.finditer(text)}

    def blank(found: re.Match[str]) -> str:
        if keep.get(found.start()) == found.end():
            return found.group()
        return re.sub(r"[^\n]", " ", found.group())

    return _TOKENS.sub(blank, text)


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?P<macro>[A-Za-z_]\w*)\((?P<body>(?:[^\n]*\\\n)*[^\n]*)", re.M)


def macro_definitions(code: str, body: re.Pattern[str]) -> list[re.Match[str]]:
    """Uses of function-like macros whose definition (continuation lines included) the
    body regex finds, where the use defines something: `DEFINE_FWD_KERNEL(fwd, ...) {`.
    Kernel libraries built on CUTLASS declare their main kernels this way, and a regex on
    `__global__` alone sees only the macro, never the kernels."""
    if "#" not in code:
        return []
    defines = list(_DEFINE.finditer(code))
    macros = {m.group("macro") for m in defines if body.search(m.group("body"))}
    if not macros:
        return []
    names = "|".join(re.escape(name) for name in sorted(macros))
    use = re.compile(r"\b(?:" + names + r")\s*\(\s*(?P<name>[A-Za-z_]\w*)\s*(?:,(?:[^()]|\([^()]*\))*)?\)\s*\{")
    return [m for m in use.finditer(code) if not any(d.start() <= m.start() < d.end() for d in defines)]


_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?P<kind>ifdef|ifndef|if|elif|else|endif)\b[ \t]*(?P<test>.*)$")
_ONE_MACRO = re.compile(r"^(?P<not>!?)[ \t]*(?:defined[ \t]*\(?[ \t]*)?(?P<macro>[A-Za-z_]\w*)[ \t]*\)?[ \t]*$")
PREPROCESSOR_GUARD = "guard.preprocessor"


def cuda_only_lines(code: str, macros: re.Pattern[str]) -> dict[int, str]:
    """Line (1-based) -> the directive that compiles it only with CUDA, for the lines inside
    `#ifdef WITH_CUDA` (or `#if defined(WITH_CUDA)`, or the `#else` of `#ifndef WITH_CUDA`)
    where the macro is one a CUDA build alone defines (`macros`): a build without CUDA
    compiles them out. Compound conditions and `#elif` branches are read as unknown."""
    if "#" not in code:
        return {}
    out: dict[int, str] = {}
    open_: list[tuple[bool | None, str, str | None]] = []  # (first branch is CUDA's, directive, live branch's CUDA directive)
    for number, line in enumerate(code.split("\n"), 1):
        found = _CONDITIONAL.match(line)
        if found is None:
            live = next((d for _, _, d in reversed(open_) if d), None)
            if live is not None:
                out[number] = live
            continue
        kind, test = found.group("kind"), found.group("test").strip()
        if kind in ("ifdef", "ifndef", "if"):
            one = _ONE_MACRO.match(test)
            cuda = None if one is None or macros.match(one.group("macro")) is None else (kind != "ifndef") != bool(one.group("not"))
            directive = f"#{kind} {test}"
            open_.append((cuda, directive, directive if cuda else None))
        elif open_ and kind == "else":
            cuda, directive, _ = open_[-1]
            open_[-1] = (cuda, directive, f"the #else of `{directive}`" if cuda is False else None)
        elif open_ and kind == "elif":
            open_[-1] = (None, open_[-1][1], None)
        elif open_ and kind == "endif":
            open_.pop()
    return out


def analyze_native(path: str, text: str, rules: list[Rule], cuda_macros: re.Pattern[str] | None = None) -> list[RawMatch]:
    """Every native rule's matches in one C, C++ or CUDA source. Outside `.cu`/`.cuh`
    files, a match that only a CUDA build compiles (`#ifdef WITH_CUDA`: `cuda_macros`) is
    guarded: a build without CUDA leaves it out (audits AL and BA: pytorch_scatter's and
    pytorch_cluster's dispatchers include their CUDA headers so)."""
    code = blank_comments(text)
    lines = LineIndex(text, NEWLINES_ONLY)
    compiled_out = cuda_only_lines(code, cuda_macros) if cuda_macros is not None and not path.endswith((".cu", ".cuh")) else {}
    matches: list[RawMatch] = []
    for rule in rules:
        for matcher in rule.matchers:
            if matcher.kind != "native" or matcher.regex is None:
                continue
            if matcher.files and not path_matches(path, matcher.files):
                continue
            found_all = list(matcher.regex.finditer(code))
            if matcher.macro_body is not None:
                found_all += macro_definitions(code, matcher.macro_body)
            for found in found_all:
                if found.end() == found.start():
                    continue
                detail = found.groupdict().get("name")
                span = lines.span(found.start(), found.end())
                directive = compiled_out.get(span.line)
                matches.append(
                    RawMatch(
                        rule_id=rule.id,
                        span=span,
                        snippet=normalize_snippet(text[found.start() : found.end()])[:160],
                        detail=detail,
                        guarded=directive is not None,
                        reasons=(Reason(PREPROCESSOR_GUARD, f"under `{directive}`: a build without CUDA compiles it out"),) if directive is not None else (),
                    )
                )
    return matches
