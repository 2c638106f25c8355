"""C, C++ and CUDA sources: regexes over the code with comments and literals blanked.

A kernel library is the largest single cost of a migration, so `__global__` kernels,
`<<<...>>>` launches and CUDA includes must be found; and prose in comments (which
kernel authors write a lot of) must never count. Blanking keeps every offset, so
positions stay exact.
"""

from __future__ import annotations

import re

from tpucheck.discover.textpos import NEWLINES_ONLY, LineIndex
from tpucheck.findings import RawMatch, normalize_snippet
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


def analyze_native(path: str, text: str, rules: list[Rule]) -> list[RawMatch]:
    code = blank_comments(text)
    lines = LineIndex(text, NEWLINES_ONLY)
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
                matches.append(
                    RawMatch(
                        rule_id=rule.id,
                        span=lines.span(found.start(), found.end()),
                        snippet=normalize_snippet(text[found.start() : found.end()])[:160],
                        detail=detail,
                    )
                )
    return matches
