"""Build and infrastructure files (Dockerfiles, CMake, shell, YAML configs): path globs
and line regexes, with `#` comments stripped so a commented-out line never counts."""

from __future__ import annotations

import re

from tpucheck.findings import RawMatch, Span, normalize_snippet
from tpucheck.ruleset.model import Rule
from tpucheck.ruleset.names import path_matches

_COMMENT = re.compile(r"(^|\s)#.*$")


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
            searched = lines if matcher.keep_comments else stripped
            assert searched is not None
            for number, (line, code) in enumerate(zip(lines, searched), start=1):
                for found in matcher.regex.finditer(code):
                    if found.end() > found.start():
                        matches.append(
                            RawMatch(
                                rule.id,
                                Span(number, found.start() + 1, number, found.end() + 1),
                                normalize_snippet(line)[:160],
                                detail=found.groupdict().get("name"),
                            )
                        )
    return matches
