"""The judgement's numbers: effort, score, grade, top contributors and a phased plan.

The score models work, not findings (DESIGN.md, Judgement). Work comes in items an
engineer would list, each priced in hours (rules/judgement.yaml `score` holds every
constant, the README the formula):

    kernel        per file: the first kernel full, each further one a tenth; a kernel
                  copied into another folder a tenth; with a PyTorch reference, half
    stack         a CUDA-only stack (DeepSpeed, vLLM ...): its hours once, plus hours for
                  each further product file built on it
    package       a CUDA-only package: swapped once
    mechanical    per rule and file: the first occurrence full, each further a tenth
    fallback      a CUDA path that keeps one: a fifth of its hours, at most 2 per unit
    validation    per workload of the product (training, inference): a run on the target
                  and a numerics check, plus a share of the product's porting hours on
                  that workload (each replaced part is checked against the CUDA run),
                  plus hours per doubling of the product's size (its Python lines)
    weight        SEVERITY * CONFIDENCE (a blocker that is an edit, not a kernel or a
                  CUDA-only package, weighs as a major), a quarter in supporting and experimental code,
                  the validation floor's own weight
    cost          sum of hours * weight                      ("weighted hours")
    effort        the hours' sum per bucket (product, supporting, ...), at most 3x wide;
                  above 30 hours, the 0.8 power of it (a large port shares its set-up)
    score         100 - 10 * log2(1 + cost / 16), at least 0; at most 59.9 while a kernel
                  or a CUDA-only dependency blocks the product's main path, 89.9 while any
                  other blocker does

A new finding never lowers the cost nor lifts a cap, so it never raises the score
(tests/test_score_properties.py proves it over the real rules).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tpucheck.findings import Finding
from tpucheck.judge.core import kernel_core
from tpucheck.judge.known_ops import is_known_op
from tpucheck.judge.place import OWN_EXTENSION, UNUSED_PACKAGE
from tpucheck.judge.roles import PRODUCT_ROLES, SUPPORTING_ROLES
from tpucheck.judge.shares import Share, command_of, keep_heaviest, line_copies, op_name, package_of
from tpucheck.ruleset.judgement import CONFIG_SWITCH, DROP_IN, KNOWN_CALL, Judgement
from tpucheck.ruleset.model import Rule

PHASES = ("run", "mechanical", "validation", "fallback", "supporting", "optional", "performance")
PHASE_TITLES = {
    "run": "Make it run",
    "mechanical": "Mechanical edits",
    "validation": "Validate on the target",
    "fallback": "CUDA paths that keep a fallback",
    "supporting": "Tests, examples and benchmarks",
    "optional": "Experimental code",
    "performance": "Performance on the target",
}
VALIDATION = "validation"
"""The rule field of a plan step that validates a workload (no rule of its own)."""
EXPERIMENTAL = "experimental"
FACT_INVENTORIES = frozenset({"reference", "tpu-support"})
"""Findings that record assets (a PyTorch reference path, existing TPU support), not work."""


def is_supporting(finding: Finding) -> bool:
    return finding.role in SUPPORTING_ROLES


def is_product(finding: Finding) -> bool:
    return finding.role in PRODUCT_ROLES


def bucket(finding: Finding) -> str:
    """Whose effort a finding's work is: the product's, supporting code's or experimental code's."""
    return "supporting" if is_supporting(finding) else EXPERIMENTAL if finding.role == EXPERIMENTAL else "product"


@dataclass(frozen=True, slots=True)
class Effort:
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"low": round(self.low, 1), "high": round(self.high, 1)}

    @classmethod
    def narrowed(cls, low: float, high: float, ratio: float = 3.0) -> Effort:
        """A sum of per-item guesses, pulled to at most `ratio` between its ends around the
        same geometric middle: summing widens ranges past anything a plan can use."""
        if low > 0 and high > ratio * low:
            middle = math.sqrt(low * high)
            low, high = middle / math.sqrt(ratio), middle * math.sqrt(ratio)
        elif low <= 0 < high:
            low = high / ratio
        return cls(low, high)


class Model:
    """The score's constants and the rules, applied to findings."""

    def __init__(self, rules: dict[str, Rule], judgement: Judgement) -> None:
        self.rules = rules
        self.s = judgement.scoring
        self.noise = judgement.op_noise

    # -- weights and hours ---------------------------------------------------------------

    def weight(self, finding: Finding) -> float:
        s = self.s
        severity = s.severity_weight[finding.severity]
        if finding.severity == "blocker" and s.edit_blocker_weight is not None and not self.replaced_whole(finding):
            severity = s.edit_blocker_weight
        weight = severity * s.confidence_factor[finding.confidence]
        if is_supporting(finding):
            weight *= s.supporting_factor
        elif finding.role == EXPERIMENTAL:
            weight *= s.optional_factor
        return weight

    def hours(self, finding: Finding, low: float, high: float, units: float) -> tuple[float, float]:
        """A fallback-kept path is checked, not ported: a fifth of its hours, at most 2 per
        unit, however big the CUDA path it stands beside."""
        if finding.guarded:
            cap = self.s.fallback_max_hours
            low, high = min(low * self.s.fallback_factor, cap), min(high * self.s.fallback_factor, cap)
        if any(reason.rule == UNUSED_PACKAGE for reason in finding.because):
            cap = self.s.unused_package_hours
            low, high = min(low, cap / 4), min(high, cap)
        return low * units, high * units

    def is_kernel(self, finding: Finding) -> bool:
        """A kernel to port; a device helper function is part of its kernel's work."""
        return finding.inventory == "kernel" and self.rules[finding.rule].kernel_kind != "device-helper"

    def share(self, finding: Finding, units: float) -> Share:
        rule = self.rules[finding.rule]
        low, high = self.hours(finding, rule.effort_low, rule.effort_high, units)
        return Share(finding, low, high, self.weight(finding))

    def full(self, finding: Finding) -> float:
        """The cost of one full unit at this finding: what ranks a group's findings, so the
        heaviest takes the full unit and adding a finding never lowers the cost."""
        return self.share(finding, 1.0).cost

    # -- work items ----------------------------------------------------------------------

    def shares(self, findings: Iterable[Finding], references: Sequence[frozenset[str]] = (), reference_folders: frozenset[str] = frozenset()) -> list[Share]:
        groups: dict[tuple[str, str], list[Finding]] = {}
        for finding in findings:
            rule = self.rules[finding.rule]
            per_package = rule.effort_per == "package" and finding.detail is not None
            whole_project = per_package or rule.effort_per == "project" or finding.inventory == "package" or rule.stack is not None
            # Checking that a fallback-kept kernel's fallback runs is done once for its
            # family (the folder of an extension or op), however many kernels it holds.
            family = finding.guarded and self.is_kernel(finding)
            per_name = rule.effort_per == "name" and finding.detail is not None
            place = (
                package_of(finding.detail) if per_package and finding.detail is not None
                else f"name:{op_name(finding.detail)}" if per_name and finding.detail is not None
                else "" if whole_project
                else f"{folder_of(finding.path)}/" if family
                else finding.path
            )  # fmt: skip
            # Each bucket (product, supporting, experimental) does its own work: a test's
            # use of a package never takes the product's unit of it.
            groups.setdefault((finding.rule, f"{bucket(finding)}:{place}"), []).append(finding)
        out: list[Share] = []
        kernels: list[tuple[Share, float]] = []
        for (rule_id, _), items in sorted(groups.items()):
            rule = self.rules[rule_id]
            ranked = sorted(items, key=lambda f: (-self.full(f), f.sort_key()))
            files = {ranked[0].path}
            for index, finding in enumerate(ranked):
                kernel = self.is_kernel(finding)
                if index == 0:
                    units = 1.0
                elif rule.effort_per == "occurrence":
                    units = self.s.kernel_repeat_factor if kernel and not finding.guarded else self.s.repeat_factor
                else:
                    units = 0.0
                # The op's reference is named like the kernel, or sits in the kernel's own
                # folder (an op library's `ops/<op>/naive.py` beside `ops/<op>/chunk.py`).
                if kernel and (has_reference(finding.detail, references, self.noise) or folder_of(finding.path) in reference_folders):
                    units *= self.s.reference_factor
                if any(reason.rule == OWN_EXTENSION for reason in finding.because):
                    units *= self.s.copy_factor  # the binding of the project's own extension
                if is_known_op(finding):
                    units *= self.s.known_op_factor  # re-expressed from a published formulation
                share = self.share(finding, units)
                if rule.stack is not None and finding.path not in files and not finding.guarded:
                    # Each further file built on the stack is part of its rework (an
                    # optional integration is checked once, with its fallback).
                    files.add(finding.path)
                    low, high = self.hours(finding, *self.s.stack_file_hours, 1.0)
                    share = Share(finding, share.low + low, share.high + high, share.weight)
                if kernel and not finding.guarded:
                    kernels.append((share, units))
                else:
                    out.append(share)
        out.extend(self._without_copies(kernels))
        copied = line_copies(self._config_copies(out), self.s.line_copies_at_most, self.s.config_suffixes, lambda f: f.guarded or self.is_kernel(f), bucket)
        return self._shared_fixes(copied)

    def _shared_fixes(self, shares: list[Share]) -> list[Share]:
        """A missing op used in several files is one helper written once: per rule, the
        file whose shares cost most keeps its price, every share of each further file costs
        a copy (total per rule = max file + copy x the rest)."""
        categories = self.s.shared_fix_categories
        files: dict[tuple[str, str], dict[str, list[int]]] = {}
        for at, share in enumerate(shares):
            finding = share.finding
            if finding is None or self.rules[finding.rule].category not in categories:
                continue
            files.setdefault((finding.rule, bucket(finding)), {}).setdefault(finding.path, []).append(at)
        return keep_heaviest(shares, self.s.copy_factor, [list(per_file.values()) for per_file in files.values()])

    def _config_copies(self, shares: list[Share]) -> list[Share]:
        """The same value of the same rule in several configs (`backend: nccl` in each of 37
        training recipes) is one edit made with one search and replace: the heaviest is
        priced in full, each further config file a copy (`copy_factor`). In launch scripts
        (`command_suffixes`) the value is the command the line runs, whatever its
        arguments (shares.command_of)."""
        suffixes = self.s.config_suffixes
        copies: dict[tuple[str, str, str], list[list[int]]] = {}
        for at, share in enumerate(shares):
            finding = share.finding
            if finding is None or finding.guarded or not suffixes or not finding.path.lower().endswith(suffixes):
                continue
            path = finding.path.lower()
            key = command_of(finding.snippet) if path.endswith(self.s.command_suffixes) else ""
            copies.setdefault((finding.rule, bucket(finding), key or finding.snippet), []).append([at])
        return keep_heaviest(shares, self.s.copy_factor, list(copies.values()), self.s.config_copies_at_most)

    def _without_copies(self, kernels: list[tuple[Share, float]]) -> list[Share]:
        """A kernel of the same rule and name in another folder is a copy (a vendored or
        versioned duplicate): the heaviest is ported, the others cost a tenth."""
        copies: dict[tuple[str, str], list[tuple[Share, float]]] = {}
        out: list[Share] = []
        for share, units in kernels:
            finding = share.finding
            assert finding is not None
            name = finding.detail
            if not name:
                out.append(share)
                continue
            copies.setdefault((finding.rule, f"{bucket(finding)}:{name}"), []).append((share, units))
        for group in copies.values():
            ranked = sorted(group, key=lambda item: (-item[0].cost, _sort_key(item[0])))
            folders = {folder_of(ranked[0][0].finding.path)} if ranked[0][0].finding else set()
            out.append(ranked[0][0])
            for share, units in ranked[1:]:
                finding = share.finding
                assert finding is not None
                folder = folder_of(finding.path)
                if folder in folders or units <= self.s.copy_factor:
                    out.append(share)
                    continue
                out.append(self.share(finding, self.s.copy_factor))
        return out

    def validation(self, workloads: Sequence[str], ported: Sequence[Share] = (), product_lines: int = 0) -> list[Share]:
        """Per workload: the floor (a run on the target and a numerics check, never 0), plus
        `share` of the product's porting hours on that workload (each replaced part is
        compared with the CUDA run); a part that serves several workloads is split among
        them; plus the product's size term (`validation_size` x a power of its thousands of
        lines, split among the workloads; above the floor, `floor_is_minimum`). Porting hours only grow with findings, so
        validation does too; the size term depends on no finding."""
        known = [w for w in workloads if w in self.s.validation]
        thousands = max(product_lines, 0) / 1000.0
        exponent = self.s.validation_size_exponent
        size = (math.log2(1.0 + thousands) if exponent is None else thousands**exponent) / max(len(known), 1)
        extra = {w: [self.s.validation_size[0] * size, self.s.validation_size[1] * size] for w in known}
        if self.s.validation_floor_is_minimum:
            extra = {w: [max(lo - self.s.validation[w][0], 0.0), max(hi - self.s.validation[w][1], 0.0)] for w, (lo, hi) in extra.items()}
        if self.s.validation_share:
            for share in ported:
                finding = share.finding
                if finding is None or finding.severity == "info" or not is_product(finding):
                    continue
                serves = [w for w in known if w in finding.affects]
                for w in serves:
                    extra[w][0] += share.low * self.s.validation_share / len(serves)
                    extra[w][1] += share.high * self.s.validation_share / len(serves)
        return [Share(None, self.s.validation[w][0] + extra[w][0], self.s.validation[w][1] + extra[w][1], self.s.validation_weight, workload=w) for w in known]

    def port_floor(self, split: Sequence[Share]) -> list[Share]:
        """Hours that bring the product's port up to `port_floor`, in its validation items
        (a TPU environment, a first run per workload, a numerics check: the least any port
        costs, whatever it finds), weighing nothing in the score: a further finding lowers
        the top-up by at most its own hours, so neither the total nor the score can fall."""
        low, high = self.s.port_floor
        validated = [s.workload for s in split if s.finding is None and s.workload is not None]
        if not validated or (low <= 0 and high <= 0):
            return []
        total = self.total(s for s in split if s.finding is None or is_product(s.finding))
        short = (max(low - total.low, 0.0), max(high - total.high, 0.0))
        if short == (0.0, 0.0):
            return []
        return [Share(None, short[0] / len(validated), short[1] / len(validated), 0.0, workload=w) for w in validated]

    def floored(self, total: Effort, topped: bool) -> Effort:
        """The product's hours, at least `port_floor` where it was topped up: the maximum
        of the items' total and the floor, exactly, so a further finding never lowers it."""
        if not topped:
            return total
        low, high = self.s.port_floor
        return Effort(max(total.low, low), max(total.high, high))

    # -- numbers -------------------------------------------------------------------------

    def score_of(self, cost: float) -> float:
        return round(max(0.0, 100.0 - self.s.points_per_doubling * math.log2(1.0 + cost / self.s.hours_unit)), 1)

    def replaced_whole(self, finding: Finding) -> bool:
        """A kernel or a CUDA-only package to replace (grade D at best while it blocks),
        unless its module has a drop-in PyTorch one (`cap.drop-in`), a public function
        computes its op already (`cap.known-call`) or a configuration value alone picks it
        (`cap.config-switch`): that is an edit."""
        capped = finding.inventory in self.s.capped_inventories or finding.rule in self.s.capped_rules
        return capped and not any(reason.rule in (DROP_IN, KNOWN_CALL, CONFIG_SWITCH) for reason in finding.because)

    def capped(self, score: float, findings: Iterable[Finding]) -> float:
        """A grade never says "runs after mechanical edits" while a blocker stands on the
        product's main path, nor less than "kernels or dependencies to replace" while a
        kernel or a CUDA-only package does."""
        cap = 100.0
        for finding in findings:
            if finding.severity != "blocker" or finding.guarded or not is_product(finding):
                continue
            cap = min(cap, self.s.kernel_cap if self.replaced_whole(finding) else self.s.blocker_cap)
        return min(score, cap)

    def grade_of(self, score: float) -> str:
        return next(letter for bound, letter in self.s.grades if score >= bound)

    def effort(self, items: Iterable[Share], *, performance: bool = False) -> Effort:
        kept = [s for s in items if performance or s.finding is None or s.finding.severity != "info"]
        # exactly rounded sums: the same findings in any order (a merge of shards) give the
        # same hours to the last digit
        return Effort.narrowed(math.fsum(s.low for s in kept), math.fsum(s.high for s in kept), self.s.max_range_ratio)

    def total(self, items: Iterable[Share], *, performance: bool = False) -> Effort:
        """A port's hours from its items: their sum, and above `score.scale.above` a power
        of it below one (set-up and what is learnt on the first items serve the rest). The
        plan's steps keep their own sums; the power is increasing, so a further finding
        never lowers the total."""
        summed = self.effort(items, performance=performance)
        return Effort(self.scaled(summed.low), self.scaled(summed.high))

    def scaled(self, hours: float) -> float:
        above = self.s.scale_above
        if above is None or hours <= above:
            return hours
        return above * (hours / above) ** self.s.scale_exponent


def cost_of(items: Iterable[Share]) -> float:
    return math.fsum(share.cost for share in items)


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
    grade_meaning: str
    training: float
    inference: float
    effort: Effort
    """Hours to make the product (library and scripts) run, finish its edits and validate it."""
    supporting_effort: Effort
    """Hours for tests, examples, benchmarks and docs, counted apart."""
    optional_effort: Effort
    """Hours for experimental code, counted apart."""
    performance_effort: Effort
    """Hours of performance work (info findings), not in the score."""
    cost: float
    contributors: tuple[Contributor, ...]
    plan: tuple[PlanItem, ...]


def op_words(name: str, noise: frozenset[str]) -> frozenset[str]:
    """`_layer_norm_fwd_1pass_kernel` -> {layer, norm, 1pass}: the words that name the op
    (rules/judgement.yaml `kernels.op_noise` says which words name nothing)."""
    return frozenset(w for w in name.lower().strip("_").split("_") if w and w not in noise)


def has_reference(kernel: str | None, references: Iterable[frozenset[str]], noise: frozenset[str]) -> bool:
    if not kernel:
        return False
    words = op_words(kernel, noise)
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


def compute_score(findings: list[Finding], rules: dict[str, Rule], judgement: Judgement, workloads: Sequence[str] = (), product_lines: int = 0) -> Score:
    model = Model(rules, judgement)
    scoring = judgement.scoring
    references = [op_words(f.detail, model.noise) for f in findings if f.inventory == "reference" and f.detail]
    reference_folders = frozenset(folder_of(f.path) for f in findings if f.inventory == "reference" and not is_supporting(f))
    findings = [f for f in findings if f.inventory not in FACT_INVENTORIES]
    ported = model.shares(findings, references, reference_folders)
    split = ported + model.validation(workloads, ported, product_lines)
    floor = model.port_floor(split)
    split += floor
    cost = cost_of(split)
    score = model.capped(model.score_of(cost), findings)
    by_workload = {
        workload: model.capped(
            model.score_of(cost_of(s for s in split if (s.workload == workload if s.finding is None else workload in s.finding.affects))),
            (f for f in findings if workload in f.affects),
        )
        for workload in ("training", "inference")
    }
    product = [s for s in split if s.finding is None or is_product(s.finding)]
    supporting = [s for s in split if s.finding is not None and is_supporting(s.finding)]
    optional = [s for s in split if s.finding is not None and s.finding.role == EXPERIMENTAL]
    performance = [s for s in split if s.finding is not None and s.finding.severity == "info"]
    grade = model.grade_of(score)
    meaning = scoring.grade_meaning.get(grade, "")
    core = kernel_core(product, findings, scoring) if score <= scoring.kernel_cap and grade != "F" else None
    if core is not None:
        grade = "F"
        meaning = f"{scoring.grade_meaning.get(grade, '')}: {core}"
    return Score(
        score=score,
        grade=grade,
        grade_meaning=meaning,
        training=by_workload["training"],
        inference=by_workload["inference"],
        effort=model.floored(model.total(s for s in product if s.finding is not None or s.weight > 0), bool(floor)),
        supporting_effort=model.total(supporting),
        optional_effort=model.total(optional),
        performance_effort=model.total(performance, performance=True),
        cost=round(cost, 3),
        contributors=_contributors(split, rules, cost),
        plan=_plan(split, model, cost),
    )


def _contributors(split: list[Share], rules: dict[str, Rule], total: float, limit: int = 5) -> tuple[Contributor, ...]:
    by_rule: dict[str, list[Share]] = {}
    for share in split:
        if share.finding is not None:
            by_rule.setdefault(share.finding.rule, []).append(share)
    costs = {rule: cost_of(items) for rule, items in by_rule.items()}
    ranked = sorted((rule for rule in costs if costs[rule] > 0), key=lambda r: (-costs[r], r))[:limit]
    return tuple(
        Contributor(rule, rules[rule].name, len(by_rule[rule]), costs[rule], costs[rule] / total if total else 0.0)
        for rule in ranked
    )


def phase_of(share: Share) -> str:
    finding = share.finding
    if finding is None:
        return "validation"
    if finding.severity == "info":
        return "performance"
    if is_supporting(finding):
        return "supporting"
    if finding.role == EXPERIMENTAL:
        return "optional"
    if finding.guarded:
        return "fallback"
    if finding.severity == "blocker":
        return "run"
    return "mechanical"


def _plan(split: list[Share], model: Model, total: float) -> tuple[PlanItem, ...]:
    """Steps in phases (make it run, mechanical edits, validation, fallbacks, supporting
    code, experimental code, performance); within a phase, most cost removed per hour
    first. A step is one rule in one phase: a package, a kernel kind, a batch of one
    mechanical edit; or the validation of one workload."""
    steps: dict[tuple[str, str], list[Share]] = {}
    for share in split:
        step = share.finding.rule if share.finding is not None else f"{VALIDATION}:{share.workload}"
        steps.setdefault((phase_of(share), step), []).append(share)

    def effort(key: tuple[str, str]) -> Effort:
        return model.effort(steps[key], performance=key[0] == "performance")

    def priority(key: tuple[str, str]) -> tuple[int, float, str]:
        spent = effort(key)
        hours = max((spent.low + spent.high) / 2, 0.05)
        return (PHASES.index(key[0]), -cost_of(steps[key]) / hours, key[1])

    plan: list[PlanItem] = []
    remaining = list(split)
    previous = model.capped(model.score_of(total), (s.finding for s in remaining if s.finding is not None))
    for key in sorted(steps, key=priority):
        phase, rule_id = key
        items = steps[key]
        done = {id(s) for s in items}
        remaining = [s for s in remaining if id(s) not in done]
        after = model.capped(model.score_of(max(cost_of(remaining), 0.0)), (s.finding for s in remaining if s.finding is not None))
        findings = [s.finding for s in items if s.finding is not None]
        if findings:
            rule = model.rules[rule_id]
            files = len({f.path for f in findings})
            title = f"{rule.name}: {len(findings)} in {files} file{'s' if files != 1 else ''}"
            name, category, fix = rule.name, rule.category, rule.fix
            severity = min((f.severity for f in findings), key=("blocker", "major", "minor", "info").index)
        else:
            workload = rule_id.partition(":")[2]
            title = f"validate {workload} on the target: a run and a numerics check against the GPU"
            name, category, fix, severity, files = f"validate-{workload}", VALIDATION, "Run it on the target and compare its numbers with the GPU run's.", "minor", 0
            rule_id = VALIDATION
        plan.append(
            PlanItem(
                phase=phase,
                title=title,
                rule=rule_id,
                name=name,
                category=category,
                severity=severity,
                findings=len(findings),
                files=files,
                score_gain=round(after - previous, 1),
                score_after=after,
                effort=effort(key),
                fix=fix,
            )
        )
        previous = after
    return tuple(plan)


def _sort_key(share: Share) -> tuple[object, ...]:
    return share.finding.sort_key() if share.finding is not None else ()
