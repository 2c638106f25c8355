"""The readiness score, grade, effort and migration plan, from findings alone.

The formula (also in the README, so a user can check it by hand):

    weight(finding) = SEVERITY[severity] * CONFIDENCE[confidence] * ROLE[role] * (0.5 if guarded)
                      / (size factor, for non-blockers only)
    cost(rule)      = w1/1 + w2/2 + w3/3 + ...   (its findings' weights, largest first)
    score           = 100 * exp(-sum(cost(rule)) / 120)

Repeats of one rule cost less and less (the tenth `.cuda()` costs a tenth of the first);
a new finding never raises the score; blockers are not diluted by size, so one custom
kernel in library code keeps the score at 81 at most; the size factor
max(1, sqrt(lines / 20000)) makes ten `.cuda()` calls in a large repo cost less than
in a small one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from tpucheck.findings import Finding

SEVERITY_WEIGHT = {"blocker": 25.0, "major": 3.0, "minor": 1.0, "info": 0.0}
CONFIDENCE_FACTOR = {"high": 1.0, "medium": 0.75, "low": 0.5}
ROLE_FACTOR = {"library": 1.0, "script": 0.5, "test": 0.25, "example": 0.25, "benchmark": 0.25, "docs": 0.25}
GUARDED_FACTOR = 0.5
SCALE = 120.0
SIZE_UNIT_LINES = 20_000
GRADES = ((90.0, "A"), (75.0, "B"), (60.0, "C"), (40.0, "D"), (0.0, "F"))


def size_factor(lines: int) -> float:
    return max(1.0, math.sqrt(lines / SIZE_UNIT_LINES))


def finding_weight(finding: Finding, size: float) -> float:
    weight = SEVERITY_WEIGHT[finding.severity] * CONFIDENCE_FACTOR[finding.confidence] * ROLE_FACTOR.get(finding.role, 1.0)
    if finding.guarded:
        weight *= GUARDED_FACTOR
    if finding.severity != "blocker":
        weight /= size
    return weight


def rule_costs(findings: Iterable[Finding], size: float) -> dict[str, float]:
    weights: dict[str, list[float]] = {}
    for finding in findings:
        weights.setdefault(finding.rule, []).append(finding_weight(finding, size))
    return {
        rule: math.fsum(w / rank for rank, w in enumerate(sorted(ws, reverse=True), start=1))
        for rule, ws in weights.items()
    }


def score_of(cost: float) -> float:
    return round(100.0 * math.exp(-cost / SCALE), 1)


def grade_of(score: float) -> str:
    return next(letter for bound, letter in GRADES if score >= bound)


@dataclass(frozen=True, slots=True)
class Effort:
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"low": round(self.low, 1), "high": round(self.high, 1)}


def effort_of(findings: Iterable[Finding], efforts: dict[str, tuple[float, float, str]]) -> Effort:
    """Hours: per occurrence, once per file, or once per project, as each rule says."""
    low = high = 0.0
    counted: set[tuple[str, str]] = set()
    for finding in findings:
        rule_low, rule_high, per = efforts[finding.rule]
        if per == "file":
            key = (finding.rule, finding.path)
        elif per == "project":
            key = (finding.rule, "")
        else:
            key = None  # type: ignore[assignment]
        if key is not None:
            if key in counted:
                continue
            counted.add(key)
        low += rule_low
        high += rule_high
    return Effort(low, high)


@dataclass(frozen=True, slots=True)
class PlanItem:
    rule: str
    name: str
    category: str
    severity: str
    findings: int
    files: int
    score_gain: float
    """Points this item adds once every item before it in the plan is done."""
    score_after: float
    """The score once this item and every item before it are done."""
    effort: Effort
    fix: str

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "name": self.name,
            "category": self.category,
            "severity": self.severity,
            "findings": self.findings,
            "files": self.files,
            "score_gain": self.score_gain,
            "score_after": self.score_after,
            "effort_hours": self.effort.to_dict(),
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class Score:
    score: float
    grade: str
    training: float
    inference: float
    effort: Effort
    cost: float
    size_factor: float
    plan: tuple[PlanItem, ...]


def compute_score(findings: list[Finding], lines: int, efforts: dict[str, tuple[float, float, str]], fixes: dict[str, str]) -> Score:
    size = size_factor(lines)
    costs = rule_costs(findings, size)
    total = math.fsum(costs.values())
    score = score_of(total)
    by_workload = {
        workload: score_of(math.fsum(rule_costs((f for f in findings if workload in f.affects), size).values()))
        for workload in ("training", "inference")
    }
    plan = _plan(findings, costs, total, score, efforts, fixes)
    return Score(
        score=score,
        grade=grade_of(score),
        training=by_workload["training"],
        inference=by_workload["inference"],
        effort=effort_of(findings, efforts),
        cost=round(total, 3),
        size_factor=round(size, 3),
        plan=tuple(plan),
    )


def _plan(
    findings: list[Finding],
    costs: dict[str, float],
    total: float,
    score: float,
    efforts: dict[str, tuple[float, float, str]],
    fixes: dict[str, str],
) -> tuple[PlanItem, ...]:
    """Rules ordered by cost removed per hour of work, with the score reached step by step.

    Ordering by cost rather than by score points keeps the order meaningful when the
    score sits near 0, where removing any single rule barely moves it.
    """
    by_rule: dict[str, list[Finding]] = {}
    for finding in findings:
        by_rule.setdefault(finding.rule, []).append(finding)
    efforts_by_rule = {rule: effort_of(items, efforts) for rule, items in by_rule.items()}

    def priority(rule: str) -> tuple[float, float, str]:
        effort = efforts_by_rule[rule]
        hours = max((effort.low + effort.high) / 2, 0.05)
        return (-costs[rule] / hours, -costs[rule], rule)

    plan = []
    remaining, previous = total, score
    for rule in sorted(by_rule, key=priority):
        remaining -= costs[rule]
        after = score_of(max(remaining, 0.0))
        first = by_rule[rule][0]
        plan.append(
            PlanItem(
                rule, first.name, first.category, first.severity, len(by_rule[rule]),
                len({f.path for f in by_rule[rule]}), round(after - previous, 1), after, efforts_by_rule[rule], fixes[rule],
            )
        )
        previous = after
    return tuple(plan)
