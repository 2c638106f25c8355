"""Where the work is: the plan's steps sorted into kernels, dependencies, mechanical edits
and supporting code, and the sentence every report can lead with."""

from __future__ import annotations

import dataclasses

import pytest

from tpucheck.judge.score import Effort, PlanItem
from tpucheck.report.judgement import WorkArea, percent, phase_summary, work_area, work_sentence


def step(phase: str, category: str, low: float = 1.0, high: float = 3.0, findings: int = 1) -> PlanItem:
    return PlanItem(phase, "t", "R1", "r", category, "major", findings, 1, 0.0, 50.0, Effort(low, high), "fix")


@pytest.mark.parametrize(
    ("phase", "category", "area"),
    [
        ("run", "custom-kernel", "kernels"),
        ("fallback", "custom-kernel", "kernels"),  # a kernel with a fallback is still kernel work to check
        ("run", "dependency", "dependencies"),
        ("mechanical", "build", "dependencies"),  # CUDA wheels, base images
        ("mechanical", "cuda-api", "edits"),
        ("fallback", "device-placement", "edits"),
        ("supporting", "custom-kernel", "supporting"),  # a kernel in a test is test work
        ("performance", "host-sync", None),  # not in the effort
    ],
)
def test_work_area(phase: str, category: str, area: str | None) -> None:
    assert work_area(step(phase, category)) == area


def area(key: str, share: float, what: str) -> WorkArea:
    labels = {"kernels": "Kernels", "dependencies": "Dependencies", "edits": "Mechanical edits", "supporting": "Supporting code"}
    return WorkArea(key, labels[key], share * 100, share, 1, 1, what)


def test_work_sentence() -> None:
    assert work_sentence([area("kernels", 0.81, "61 kernels"), area("edits", 0.19, "9 findings in 2 steps")]) == (
        "The 61 kernels are most of the work (81% of the hours)."
    )
    assert (
        work_sentence([area("kernels", 0.7, "1 kernel"), area("edits", 0.3, "x")]) == "The 1 kernel is most of the work (70% of the hours)."
    )
    assert work_sentence([area("dependencies", 0.6, "3 packages"), area("edits", 0.4, "x")]).startswith("The 3 packages are most")
    assert work_sentence([area("dependencies", 0.6, "2 findings in 1 step"), area("edits", 0.4, "x")]).startswith("Dependencies are most")
    assert work_sentence([area("supporting", 0.6, "x"), area("edits", 0.4, "y")]).startswith("Supporting code is most")
    assert work_sentence([area("edits", 1.0, "34 findings in 13 steps")]) == "Mechanical edits are all of the work."
    spread = [
        area("kernels", 0.40, "7 kernels"),
        area("dependencies", 0.41, "8 packages"),
        area("edits", 0.188, "x"),
        area("supporting", 0.002, "y"),
    ]
    assert work_sentence(spread) == "The work is spread out: dependencies 41%, kernels 40%, mechanical edits 19%."
    assert work_sentence([]) == "Nothing to port."
    assert work_sentence([dataclasses.replace(area("edits", 0.0, "x"), hours=0.0)]) == "Nothing to port."


def test_percent_never_says_zero_for_work_that_exists() -> None:
    assert [percent(x) for x in (0.0, 0.001, 0.005, 0.806, 1.0)] == ["0%", "<1%", "<1%", "81%", "100%"]


def test_phase_summary_counts_in_the_singular() -> None:
    assert phase_summary([step("run", "custom-kernel", 46, 138, findings=1)]) == "1 finding, 1 step, 46-138 h, score 50.0"
    assert phase_summary([step("run", "x"), step("run", "y", findings=2)]).startswith("3 findings, 2 steps, ")
