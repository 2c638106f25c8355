"""Build and infrastructure files (Dockerfiles, CMake, shell, YAML configs): path globs
and line regexes, with `#` comments stripped so a commented-out line never counts.

In CMake files the arguments of `message(...)` are text for the user, not directives: a
`message(FATAL_ERROR "set CMAKE_CUDA_ARCHITECTURES")` enables no CUDA (audit BC: an
instant-ngp error message read as a CUDA build, twice on its line). They are blanked
before matching, columns kept. A rule reports a line once, at its first match.
"""

from __future__ import annotations

import re

from tpucheck.analyze.cmake import is_cmake_file
from tpucheck.findings import RawMatch, Span, normalize_snippet
from tpucheck.ruleset.model import Rule
from tpucheck.ruleset.names import path_matches

_COMMENT = re.compile(r"(^|\s)#.*$")
_MESSAGE = re.compile(r"\bmessage\s*\(", re.IGNORECASE)


OTHER_KINDS = frozenset({"file", "config", "option"})
"""Matcher kinds that read files of kind "other": by path and line (`file`), by key path
(`config`, analyze/configs.py) or by command-line option (`option`, analyze/launch.py)."""


def file_globs(rules: list[Rule]) -> tuple[str, ...]:
    """The globs discovery must list as "other" files for these rules."""
    return tuple(
        dict.fromkeys(
            p for r in rules for m in r.matchers if m.kind in OTHER_KINDS for p in (m.patterns if m.kind == "file" else m.files)
        )
    )


def analyze_textfile(path: str, text: str, rules: list[Rule]) -> list[RawMatch]:
    matches: list[RawMatch] = []
    lines: list[str] | None = None
    stripped: list[str] | None = None
    for rule in rules:
        for matcher in rule.matchers:
            if matcher.kind != "file" or not path_matches(path, matcher.patterns):
                continue
            if matcher.regex is None:
                first = text.split("\n", 1)[0]
                matches.append(RawMatch(rule.id, Span(1, 1, 1, len(first) + 1), normalize_snippet(first)[:160]))
                continue
            if lines is None:
                lines = text.splitlines()
            if stripped is None and not matcher.keep_comments:
                stripped = [_COMMENT.sub(lambda m: m.group(1), line) for line in lines]
                if is_cmake_file(path) and _MESSAGE.search(text):
                    stripped = _blank_messages(stripped)
            searched = lines if matcher.keep_comments else stripped
            assert searched is not None
            for number, (line, code) in enumerate(zip(lines, searched), start=1):
                found = next((m for m in matcher.regex.finditer(code) if m.end() > m.start()), None)
                if found is not None:
                    matches.append(
                        RawMatch(
                            rule.id,
                            Span(number, found.start() + 1, number, found.end() + 1),
                            normalize_snippet(line)[:160],
                            detail=found.groupdict().get("name"),
                        )
                    )
    return matches


def _blank_messages(lines: list[str]) -> list[str]:
    """The lines with every `message(...)` call's arguments blanked (spaces, so columns
    hold), across lines, with quoted parentheses and `\"` escapes read as CMake does."""
    out: list[str] = []
    depth = 0
    quoted = False
    for line in lines:
        chars = list(line)
        index = 0
        while index < len(chars):
            if depth == 0:
                found = _MESSAGE.search(line, index)
                if found is None:
                    break
                depth, index = 1, found.end()
                continue
            char = chars[index]
            if quoted:
                if char == "\\":
                    chars[index] = " "
                    if index + 1 < len(chars):
                        chars[index + 1] = " "
                    index += 2
                    continue
                quoted = char != '"'
            elif char == '"':
                quoted = True
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    index += 1
                    continue
            chars[index] = " "
            index += 1
        out.append("".join(chars))
    return out
