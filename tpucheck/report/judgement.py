"""Words every report uses for the judgement (target, effort, why this score, plan
phases), written once so the terminal, Markdown, HTML and concise reports agree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tpucheck.judge.score import PHASES, Effort, PlanItem, Score
from tpucheck.result import ScanResult

TARGET_LABELS = {"torchtpu": "TorchTPU", "xla": "PyTorch/XLA"}


def target_label(target: str) -> str:
    return TARGET_LABELS.get(target, target)


def hours(effort: Effort) -> str:
    """`12-36 h`; small ranges keep a decimal so an afternoon does not read as `0-1 h`."""
    if effort.high < 10:
        return f"{effort.low:.1f}-{effort.high:.1f} h"
    return f"{effort.low:.0f}-{effort.high:.0f} h"


def why_line(result: ScanResult) -> str:
    """The rules that cost the most, with their share: what moves the number."""
    parts = [f"{c.rule} {c.name} {c.share:.0%}" for c in result.score.contributors if c.share >= 0.005]
    return " · ".join(parts)


def step_label(item: PlanItem) -> str:
    """`UO028 sync-batchnorm: 1 in 1 file`; a step of no rule (a validation run) is its
    title alone, not `validation validate ...`."""
    return f"{item.rule} {item.title}" if item.findings else item.title


def plan_phases(plan: Sequence[PlanItem]) -> list[tuple[str, list[PlanItem]]]:
    grouped: dict[str, list[PlanItem]] = {}
    for item in plan:
        grouped.setdefault(item.phase, []).append(item)
    return [(phase, grouped[phase]) for phase in PHASES if phase in grouped]


def phase_summary(items: Sequence[PlanItem]) -> str:
    """`23 findings, 4 steps, 4-12 h, score 81.2`: one phase at a glance."""
    findings = sum(item.findings for item in items)
    effort = Effort.narrowed(sum(i.effort.low for i in items), sum(i.effort.high for i in items))
    return f"{_count(findings, 'finding')}, {_count(len(items), 'step')}, {hours(effort)}, score {items[-1].score_after:.1f}"


def effort_apart(score: Score) -> list[str]:
    """The hours priced apart from the product's, each with what they are for:
    `["0.5-1.5 h tests, examples, benchmarks", "23-69 h experimental code and submodules"]`."""
    parts = []
    if score.supporting_effort.high:
        parts.append(f"{hours(score.supporting_effort)} tests, examples, benchmarks")
    if score.optional_effort.high:
        parts.append(f"{hours(score.optional_effort)} experimental code and submodules")
    return parts


# --- where the work is ----------------------------------------------------------------

WORK_AREAS = ("kernels", "dependencies", "edits", "supporting", "optional")
WORK_AREA_LABELS = {
    "kernels": "Kernels",
    "dependencies": "Dependencies",
    "edits": "Mechanical edits",
    "supporting": "Supporting code",
    "optional": "Experimental and submodules",
}
_DEPENDENCY_CATEGORIES = frozenset({"dependency", "build"})
"""CUDA-only packages, CUDA wheels, base images and build files: what a team swaps, not edits."""


def work_area(item: PlanItem) -> str | None:
    """Which area a plan step belongs to; None for performance work, which is not in the
    effort. Supporting and experimental code come first: a kernel in a test is test work,
    one in a pinned submodule that repository's."""
    if item.phase == "performance":
        return None
    if item.phase == "supporting":
        return "supporting"
    if item.phase == "optional":
        return "optional"  # priced apart, like supporting code: never the product's kernels
    if item.category == "custom-kernel":
        return "kernels"
    if item.category in _DEPENDENCY_CATEGORIES:
        return "dependencies"
    return "edits"


@dataclass(frozen=True, slots=True)
class WorkArea:
    key: str
    label: str
    hours: float
    """Middle of the steps' ranges, summed: a weight for the share, not an estimate to quote."""
    share: float
    """Fraction of the hours of all four areas, 0..1."""
    findings: int
    steps: int
    what: str
    """`61 kernels`, `3 packages`, `40 findings in 9 steps`: what the hours are spent on."""


def work_split(result: ScanResult) -> list[WorkArea]:
    """Share of the effort by kernels, dependencies, mechanical edits and supporting code,
    from the plan's steps (each carries its hours), in the fixed order; areas with no step
    are left out. Arithmetic on the plan only: the analysis already priced every step."""
    grouped: dict[str, list[PlanItem]] = {}
    for item in result.score.plan:
        area = work_area(item)
        if area is not None:
            grouped.setdefault(area, []).append(item)
    hours_of = {area: sum((i.effort.low + i.effort.high) / 2 for i in items) for area, items in grouped.items()}
    total = sum(hours_of.values())
    areas = []
    for area in WORK_AREAS:
        if area not in grouped:
            continue
        items = grouped[area]
        findings = sum(i.findings for i in items)
        areas.append(
            WorkArea(
                key=area,
                label=WORK_AREA_LABELS[area],
                hours=hours_of[area],
                share=hours_of[area] / total if total else 0.0,
                findings=findings,
                steps=len(items),
                what=_what(area, result, findings, len(items)),
            )
        )
    return areas


def _what(area: str, result: ScanResult, findings: int, steps: int) -> str:
    inventory = result.inventory
    if area == "kernels" and inventory.ported_kernels:
        return _count(len(inventory.ported_kernels), "kernel")
    if area == "dependencies" and inventory.packages:
        return _count(len(inventory.packages), "package")
    return f"{_count(findings, 'finding')} in {_count(steps, 'step')}"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def percent(share: float) -> str:
    """`81%`; `<1%` for a share that is there but rounds to nothing, so a legend never
    says 0% beside work that exists."""
    text = f"{share:.0%}"
    return "<1%" if share > 0 and text == "0%" else text


MOST_OF_IT = 0.5


def work_sentence(areas: Sequence[WorkArea]) -> str:
    """One sentence on where the work is: `The 61 kernels are most of the work (81% of
    the hours).`; the areas by share when none is most of it."""
    if not any(a.hours for a in areas):
        return "Nothing to port."
    top = max(areas, key=lambda a: a.share)
    subject = {
        "kernels": f"The {top.what}" if top.what.endswith(("kernel", "kernels")) else "Kernel work",
        "dependencies": f"The {top.what}" if top.what.endswith(("package", "packages")) else "Dependencies",
    }.get(top.key, top.label)
    verb = "is" if top.key == "supporting" or subject == "Kernel work" or subject.startswith("The 1 ") else "are"
    if top.share >= 0.995:
        return f"{subject} {verb} all of the work."
    if top.share >= MOST_OF_IT:
        return f"{subject} {verb} most of the work ({percent(top.share)} of the hours)."
    parts = ", ".join(f"{a.label.lower()} {percent(a.share)}" for a in sorted(areas, key=lambda a: -a.share) if a.share >= 0.005)
    return f"The work is spread out: {parts}."


SET_ASIDE_LABELS = {
    "alternative.other-accelerator": "another accelerator's code",
    "version.older": "older versions",
    "set-aside.dead-version": "code only an old torch imports",
    "set-aside.unbuilt-source": "CUDA sources no build compiles",
    "set-aside.vendored-package": "vendored copies of published packages",
    "set-aside.test-performance": "tests' own speed",
    "set-aside.same-edit": "one edit with another finding",
    "set-aside.cuda-engine": "part of a CUDA-only engine's module",
    "set-aside.dead-launch": "launch lines that run a missing file",
    "set-aside.kernel-binding": "a kernel binding's own CUDA calls",
    "set-aside.own-package": "imports of the project's own kernel package",
}


def set_aside_text(result: ScanResult) -> str | None:
    """`12 set aside (9 another accelerator's code, 3 older versions)`: what the judgement
    reported apart and did not score, and why; None when nothing was."""
    counts = result.set_aside_counts()
    if not counts:
        return None
    parts = ", ".join(f"{n:,} {SET_ASIDE_LABELS.get(rule, rule)}" for rule, n in counts.items())
    return f"{sum(counts.values()):,} set aside ({parts})"
