"""Words every report uses for the judgement (target, effort, why this score, plan
phases), written once so the terminal, Markdown, HTML and concise reports agree."""

from __future__ import annotations

from collections.abc import Sequence

from tpucheck.result import ScanResult
from tpucheck.scoring import PHASES, Effort, PlanItem

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


def plan_phases(plan: Sequence[PlanItem]) -> list[tuple[str, list[PlanItem]]]:
    grouped: dict[str, list[PlanItem]] = {}
    for item in plan:
        grouped.setdefault(item.phase, []).append(item)
    return [(phase, grouped[phase]) for phase in PHASES if phase in grouped]


def phase_summary(items: Sequence[PlanItem]) -> str:
    """`23 findings, 4 steps, 4-12 h, score 81.2`: one phase at a glance."""
    findings = sum(item.findings for item in items)
    effort = Effort.honest(sum(i.effort.low for i in items), sum(i.effort.high for i in items))
    return f"{findings} findings, {len(items)} steps, {hours(effort)}, score {items[-1].score_after:.1f}"
