"""Dependency rules over manifest entries: which CUDA-only packages a project asks for.

A package in an optional extra (or optional group) is installed only on request, so it is
a choice the project offers, not a requirement of the product: it is reported once per
package and extra however many lines pin it (one CUDA-version extra per line is common),
marked as fallback kept, and never as a blocker.

Requirements files are not treated as optional, whatever their name: a
`requirements-cuda.txt` is what a project's install instructions and CI actually run, and
a name says less than a manifest's own structure does about what is optional.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from tpucheck.analyze.manifests import Requirement
from tpucheck.findings import RawMatch, Reason, Span, normalize_snippet, severity_rank
from tpucheck.ruleset.model import Rule

OPTIONAL_CAP = "major"
"""The most an optional extra's package can weigh."""


def match_requirements(requirements: list[Requirement], rules: list[Rule]) -> list[RawMatch]:
    matches: list[RawMatch] = []
    seen: set[tuple[str, str, str]] = set()
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
                if matcher.outside is not None and not matcher.outside.missed_by(requirement.spec):
                    continue
                matches.extend(_match(rule, requirement, seen))
                break
    return matches


def _match(rule: Rule, requirement: Requirement, seen: set[tuple[str, str, str]]) -> list[RawMatch]:
    span = Span(requirement.line, requirement.column, requirement.end_line, requirement.end_column)
    snippet = normalize_snippet(requirement.raw)[:160]
    if requirement.extra is None:
        return [RawMatch(rule_id=rule.id, span=span, snippet=snippet, detail=requirement.name or None)]
    key = (rule.id, requirement.name, requirement.extra)
    if key in seen:
        return []
    seen.add(key)
    capped = OPTIONAL_CAP if severity_rank(rule.severity) < severity_rank(OPTIONAL_CAP) else None
    return [
        RawMatch(
            rule_id=rule.id,
            span=span,
            snippet=snippet,
            guarded=True,
            detail=f"{requirement.name or requirement.spec} [extra: {requirement.extra}]",
            severity=capped,
            reasons=(Reason("guard.optional-extra", f"in the optional extra `{requirement.extra}`", requirement.line),),
        )
    ]
