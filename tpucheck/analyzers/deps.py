"""Dependency rules over manifest entries: which CUDA-only packages a project asks for."""

from __future__ import annotations

from fnmatch import fnmatchcase

from tpucheck.analyzers.manifests import Requirement
from tpucheck.findings import RawMatch, Span, normalize_snippet
from tpucheck.ruleset.model import Rule


def match_requirements(requirements: list[Requirement], rules: list[Rule]) -> list[RawMatch]:
    matches: list[RawMatch] = []
    for requirement in requirements:
        for rule in rules:
            for matcher in rule.matchers:
                if matcher.kind != "dependency":
                    continue
                if not any(fnmatchcase(requirement.name, p) for p in matcher.patterns):
                    continue
                if matcher.regex is not None and not matcher.regex.search(requirement.spec):
                    continue
                if matcher.regex is None and requirement.kind != "package":
                    continue
                matches.append(
                    RawMatch(
                        rule_id=rule.id,
                        span=Span(requirement.line, requirement.column, requirement.end_line, requirement.end_column),
                        snippet=normalize_snippet(requirement.raw)[:160],
                        detail=requirement.name or None,
                    )
                )
                break
    return matches
