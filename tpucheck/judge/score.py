"""The judgement: effort, score, grade, top contributors and a phased plan, from findings.

The score models work, not findings (DESIGN.md, Judgement). The formula, also in the
README so a user can check it by hand:

    hours(rule)  per occurrence: the first in each file full, each further one a tenth
                 (a kernel a quarter; fallback-kept kernels once per folder)
                 per file: once per file touched;  per project: once
    weight       SEVERITY (blocker 2, major 1, minor 0.5, info 0) * CONFIDENCE
                 * 0.25 in supporting code (hours on a fallback-kept path: a fifth,
                 at most 2)
    cost         sum of hours * weight                      ("weighted hours")
    score        100 - 10 * log2(1 + cost / 8), at least 0

So 8 weighted hours score 90 (A: within a day), 37 score 75 (B: days), 120 score 60
(C: weeks), 504 score 40 (D); beyond is F. Blockers weigh double, which is what puts a
custom-CUDA core in D or F and keeps many mechanical edits above it. A new finding
never lowers the cost, so it never raises the score.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tpucheck.findings import Finding
from tpucheck.judge.roles import SUPPORTING_ROLES
from tpucheck.ruleset.model import Rule

SEVERITY_WEIGHT = {"blocker": 2.0, "major": 1.0, "minor": 0.5, "info": 0.0}
CONFIDENCE_FACTOR = {"high": 1.0, "medium": 0.75, "low": 0.5}
FALLBACK_FACTOR = 0.2
FALLBACK_MAX_HOURS = 2.0
"""At most this many hours per unit to check a fallback-kept path."""
"""A CUDA path with a non-CUDA sibling already runs on the TPU: what is left is checking it."""
SUPPORTING_FACTOR = 0.25
REPEAT_FACTOR = 0.1
"""Each further occurrence of a rule in a file: one search-and-replace session, not N."""
KERNEL_REPEAT_FACTOR = 0.25
"""Each further kernel in a file: usually a variant of the same op (forward, backward, a
block size), ported with the first."""
HOURS_UNIT = 8.0
POINTS_PER_DOUBLING = 10.0
MAX_RANGE_RATIO = 3.0
GRADES = ((90.0, "A"), (75.0, "B"), (60.0, "C"), (40.0, "D"), (0.0, "F"))
GRADE_MEANING = {
    "A": "runs after mechanical edits, within a day",
    "B": "days of edits",
    "C": "weeks of porting, no kernels to write",
    "D": "kernels or CUDA-only dependencies to replace, with known alternatives",
    "F": "the core is custom CUDA with no fallback",
}
PHASES = ("run", "mechanical", "fallback", "supporting", "performance")
PHASE_TITLES = {
    "run": "Make it run",
    "mechanical": "Mechanical edits",
    "fallback": "CUDA paths that keep a fallback",
    "supporting": "Tests, examples and benchmarks",
    "performance": "Performance on the target",
}


def is_supporting(finding: Finding) -> bool:
    return finding.role in SUPPORTING_ROLES


def placed_severity(severity: str, role: str, fallback_kept: bool) -> str:
    """Where code sits bounds what it can block: supporting code never stops the product
    (at most minor), and a CUDA path with a fallback never stops anything (at most major)."""
    cap = "minor" if role in SUPPORTING_ROLES else ("major" if fallback_kept else "blocker")
    order = ("blocker", "major", "minor", "info")
    return order[max(order.index(severity), order.index(cap))]


def finding_weight(finding: Finding) -> float:
    weight = SEVERITY_WEIGHT[finding.severity] * CONFIDENCE_FACTOR[finding.confidence]
    if is_supporting(finding):
        weight *= SUPPORTING_FACTOR
    return weight


def _unit_cost(finding: Finding) -> float:
    """What one unit of the rule's effort costs at this finding: the heaviest finding of a
    group takes the full unit, which keeps the cost monotone as findings are added."""
    return finding_weight(finding) * (FALLBACK_FACTOR if finding.guarded else 1.0)


def score_of(cost: float) -> float:
    return round(max(0.0, 100.0 - POINTS_PER_DOUBLING * math.log2(1.0 + cost / HOURS_UNIT)), 1)


def grade_of(score: float) -> str:
    return next(letter for bound, letter in GRADES if score >= bound)


@dataclass(frozen=True, slots=True)
class Effort:
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"low": round(self.low, 1), "high": round(self.high, 1)}

    @classmethod
    def honest(cls, low: float, high: float) -> Effort:
        """A range whose high end is at most three times its low end, around the same
        geometric middle: summing per-rule guesses widens ranges past anything useful."""
        if low > 0 and high > MAX_RANGE_RATIO * low:
            middle = math.sqrt(low * high)
            low, high = middle / math.sqrt(MAX_RANGE_RATIO), middle * math.sqrt(MAX_RANGE_RATIO)
        elif low <= 0 < high:
            low = high / MAX_RANGE_RATIO
        return cls(low, high)


@dataclass(frozen=True, slots=True)
class Share:
    """How many hours of work one finding stands for (its share of its rule's hours)."""

    finding: Finding
    units: float
    """1 for a unit of the rule's effort, REPEAT_FACTOR for a repeat in a file, 0 when
    the rule already counted this file or project."""


def shares(
    findings: Iterable[Finding],
    rules: dict[str, Rule],
    references: Sequence[frozenset[str]] = (),
    reference_folders: frozenset[str] = frozenset(),
) -> list[Share]:
    """Split each rule's effort over its findings. The heaviest finding of a group takes the
    full unit, so adding a finding never lowers any share's product with its weight."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        per = rules[finding.rule].effort_per
        # A dependency is swapped once per package: its first use is the work, every
        # further file a repeat.
        whole_project = per == "project" or finding.inventory == "package"
        # Checking that a fallback-kept kernel's fallback runs is done once for its
        # family (the folder of an extension or op), however many kernels it holds.
        family = finding.guarded and is_kernel(finding, rules)
        key = (finding.rule, "" if whole_project else f"{folder_of(finding.path)}/" if family else finding.path)
        groups.setdefault(key, []).append(finding)
    out: list[Share] = []
    for (rule_id, _), items in sorted(groups.items()):
        per = rules[rule_id].effort_per
        ranked = sorted(items, key=lambda f: (-_unit_cost(f), f.sort_key()))
        for index, finding in enumerate(ranked):
            if index == 0:
                units = 1.0
            elif per == "occurrence":
                units = KERNEL_REPEAT_FACTOR if is_kernel(finding, rules) and not finding.guarded else REPEAT_FACTOR
            else:
                units = 0.0
            # The op's reference is named like the kernel, or sits in the kernel's own
            # folder (an op library's `ops/<op>/naive.py` beside `ops/<op>/chunk.py`).
            if is_kernel(finding, rules) and (has_reference(finding.detail, references) or folder_of(finding.path) in reference_folders):
                units *= REFERENCE_FACTOR
            out.append(Share(finding, units))
    return out


def is_kernel(finding: Finding, rules: dict[str, Rule]) -> bool:
    """A kernel to port; a device helper function is part of its kernel's work."""
    return finding.inventory == "kernel" and rules[finding.rule].kernel_kind != "device-helper"


def _hours(share: Share, rules: dict[str, Rule]) -> tuple[float, float]:
    """The hours of work a share stands for: a fallback-kept path is checked, not ported,
    and checking that the fallback runs does not grow with the size of the CUDA path (an
    optional Megatron integration is no more to check than an optional fused kernel)."""
    rule = rules[share.finding.rule]
    if share.finding.guarded:
        return (
            min(rule.effort_low * FALLBACK_FACTOR, FALLBACK_MAX_HOURS) * share.units,
            min(rule.effort_high * FALLBACK_FACTOR, FALLBACK_MAX_HOURS) * share.units,
        )
    return rule.effort_low * share.units, rule.effort_high * share.units


def _cost(items: Iterable[Share], rules: dict[str, Rule]) -> float:
    total = 0.0
    for share in items:
        low, high = _hours(share, rules)
        total += (low + high) / 2 * finding_weight(share.finding)
    return total


def _effort(items: Iterable[Share], rules: dict[str, Rule]) -> Effort:
    low = high = 0.0
    for share in items:
        if share.finding.severity == "info":
            continue
        a, b = _hours(share, rules)
        low += a
        high += b
    return Effort.honest(low, high)


@dataclass(frozen=True, slots=True)
class Contributor:
    """One rule's part of the cost: what moves the number."""

    rule: str
    name: str
    findings: int
    cost: float
    share: float
    """Fraction of the whole cost, 0..1."""

    def to_dict(self) -> dict[str, object]:
        return {"rule": self.rule, "name": self.name, "findings": self.findings, "cost": round(self.cost, 2), "share": round(self.share, 3)}


@dataclass(frozen=True, slots=True)
class PlanItem:
    phase: str
    title: str
    rule: str
    name: str
    category: str
    severity: str
    findings: int
    files: int
    score_gain: float
    """Points this step adds once every step before it in the plan is done."""
    score_after: float
    """The score once this step and every step before it are done."""
    effort: Effort
    fix: str

    def to_dict(self) -> dict[str, object]:
        return {
            "phase": self.phase,
            "title": self.title,
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
    """Hours to make the product (library and scripts) run and finish its edits."""
    supporting_effort: Effort
    """Hours for tests, examples, benchmarks and docs, counted apart."""
    performance_effort: Effort
    """Hours of performance work (info findings), not in the score."""
    cost: float
    contributors: tuple[Contributor, ...]
    plan: tuple[PlanItem, ...]

    @property
    def grade_meaning(self) -> str:
        return GRADE_MEANING[self.grade]


FACT_INVENTORIES = frozenset({"reference", "tpu-support"})
"""Findings that record assets (a PyTorch reference path, existing TPU support), not work."""
REFERENCE_FACTOR = 0.5
"""A kernel whose op has a PyTorch reference path in the repository costs half."""
_NAME_NOISE = frozenset(
    ["kernel", "kernels", "fwd", "bwd", "forward", "backward", "cuda", "cu", "triton", "ref", "reference", "torch", "pytorch", "naive", "impl", "fn", "func", "jit", "op", "ops", "launch"]
)


def op_words(name: str) -> frozenset[str]:
    """`_layer_norm_fwd_1pass_kernel` -> {layer, norm, 1pass}: the words that name the op."""
    return frozenset(w for w in name.lower().strip("_").split("_") if w and w not in _NAME_NOISE)


def has_reference(kernel: str | None, references: Iterable[frozenset[str]]) -> bool:
    if not kernel:
        return False
    words = op_words(kernel)
    return bool(words) and any(ref and (ref <= words or words <= ref) for ref in references)


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


def without_stray_references(findings: list[Finding]) -> list[Finding]:
    """A reference path is an asset only where there are kernels to route around:
    `audio_reference()` in a repository with no kernels is a recording, not a fallback.
    (Which kernel a reference serves is the score's question: `shares` prices it.)"""
    if any(f.inventory == "kernel" for f in findings):
        return findings
    return [f for f in findings if f.inventory != "reference"]


def compute_score(findings: list[Finding], rules: dict[str, Rule]) -> Score:
    references = [op_words(f.detail) for f in findings if f.inventory == "reference" and f.detail]
    reference_folders = frozenset(folder_of(f.path) for f in findings if f.inventory == "reference" and not is_supporting(f))
    findings = [f for f in findings if f.inventory not in FACT_INVENTORIES]
    split = shares(findings, rules, references, reference_folders)
    cost = _cost(split, rules)
    score = score_of(cost)
    by_workload = {
        workload: score_of(_cost((s for s in split if workload in s.finding.affects), rules))
        for workload in ("training", "inference")
    }
    product = [s for s in split if not is_supporting(s.finding)]
    supporting = [s for s in split if is_supporting(s.finding)]
    performance = [s for s in split if s.finding.severity == "info"]
    return Score(
        score=score,
        grade=grade_of(score),
        training=by_workload["training"],
        inference=by_workload["inference"],
        effort=_effort(product, rules),
        supporting_effort=_effort(supporting, rules),
        performance_effort=_performance_effort(performance, rules),
        cost=round(cost, 3),
        contributors=_contributors(split, rules, cost),
        plan=_plan(split, rules, cost),
    )


def _performance_effort(items: Sequence[Share], rules: dict[str, Rule]) -> Effort:
    low = high = 0.0
    for share in items:
        a, b = _hours(share, rules)
        low += a
        high += b
    return Effort.honest(low, high)


def _contributors(split: list[Share], rules: dict[str, Rule], total: float, limit: int = 5) -> tuple[Contributor, ...]:
    by_rule: dict[str, list[Share]] = {}
    for share in split:
        by_rule.setdefault(share.finding.rule, []).append(share)
    costs = {rule: _cost(items, rules) for rule, items in by_rule.items()}
    ranked = sorted((rule for rule in costs if costs[rule] > 0), key=lambda r: (-costs[r], r))[:limit]
    return tuple(
        Contributor(rule, rules[rule].name, len(by_rule[rule]), costs[rule], costs[rule] / total if total else 0.0)
        for rule in ranked
    )


def phase_of(finding: Finding) -> str:
    if finding.severity == "info":
        return "performance"
    if is_supporting(finding):
        return "supporting"
    if finding.guarded:
        return "fallback"
    if finding.severity == "blocker":
        return "run"
    return "mechanical"


def _plan(split: list[Share], rules: dict[str, Rule], total: float) -> tuple[PlanItem, ...]:
    """Steps in phases (make it run, mechanical edits, fallbacks, supporting code,
    performance); within a phase, most cost removed per hour first. A step is one rule in
    one phase: a package, a kernel kind, a batch of one mechanical edit."""
    steps: dict[tuple[str, str], list[Share]] = {}
    for share in split:
        steps.setdefault((phase_of(share.finding), share.finding.rule), []).append(share)

    def priority(key: tuple[str, str]) -> tuple[int, float, str]:
        items = steps[key]
        effort = _effort(items, rules) if key[0] != "performance" else _performance_effort(items, rules)
        hours = max((effort.low + effort.high) / 2, 0.05)
        return (PHASES.index(key[0]), -_cost(items, rules) / hours, key[1])

    plan: list[PlanItem] = []
    remaining, previous = total, score_of(total)
    for key in sorted(steps, key=priority):
        phase, rule_id = key
        items = steps[key]
        remaining -= _cost(items, rules)
        after = score_of(max(remaining, 0.0))
        rule = rules[rule_id]
        files = len({s.finding.path for s in items})
        label = rule.name
        effort = _effort(items, rules) if phase != "performance" else _performance_effort(items, rules)
        severity = min((s.finding.severity for s in items), key=("blocker", "major", "minor", "info").index)
        plan.append(
            PlanItem(
                phase=phase,
                title=f"{label}: {len(items)} in {files} file{'s' if files != 1 else ''}",
                rule=rule_id,
                name=rule.name,
                category=rule.category,
                severity=severity,
                findings=len(items),
                files=files,
                score_gain=round(after - previous, 1),
                score_after=after,
                effort=effort,
                fix=rule.fix,
            )
        )
        previous = after
    return tuple(plan)
