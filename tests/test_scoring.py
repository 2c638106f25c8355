"""The score's promises (DESIGN.md, Score): bounded, monotone, blocker-dominated,
sub-linear in repeats, size-aware, and the calibration anchors."""

from __future__ import annotations

from tpucheck.findings import Finding, Span
from tpucheck.scoring import compute_score, grade_of, score_of

EFFORT = {r: (0.25, 0.5, "occurrence") for r in ("DEV", "SYNC", "SEED", "NCCL", "AMP", "SCALER", "KERNEL", "EXT", "INC", "CACHE")}
FIXES = {r: "fix" for r in EFFORT}


def finding(rule: str, severity: str, n: int = 0, role: str = "library", guarded: bool = False, path: str = "lib/a.py") -> Finding:
    return Finding(rule, rule.lower(), "cuda-api", severity, "high", path, Span(n + 1, 1, n + 1, 2), None, "m", "f", ("training", "inference"), f"s{n}", role, guarded, f"fp{rule}{n}")


def score(findings: list[Finding], lines: int = 5_000) -> float:
    return compute_score(findings, lines, EFFORT, FIXES).score


def test_nothing_found_scores_100() -> None:
    assert score([]) == 100.0
    assert grade_of(100.0) == "A"


def test_bounded_and_monotone() -> None:
    findings: list[Finding] = []
    previous = 100.0
    for n in range(300):
        findings.append(finding(("DEV", "SYNC", "KERNEL")[n % 3], ("major", "minor", "blocker")[n % 3], n))
        current = score(findings)
        assert 0.0 <= current <= previous
        previous = current


def test_repeats_are_sub_linear() -> None:
    one = 100 - score([finding("DEV", "major", 0)])
    ten = 100 - score([finding("DEV", "major", n) for n in range(10)])
    assert ten < 4 * one
    first_cost = score_of(0) - score_of(3)
    assert first_cost > 0


def test_one_kernel_costs_more_than_a_hundred_minor_calls() -> None:
    kernel = score([finding("KERNEL", "blocker")])
    hundred = score([finding("CACHE", "minor", n) for n in range(100)])
    assert kernel < hundred


def test_pure_pytorch_with_twenty_mechanical_cuda_isms_scores_75_or_more() -> None:
    mix = (["DEV"] * 7 + ["SYNC"] * 4 + ["SEED"] * 2 + ["NCCL"] * 1 + ["AMP"] * 3 + ["SCALER"] * 3)
    severities = {"DEV": "major", "SYNC": "major", "SEED": "minor", "NCCL": "major", "AMP": "major", "SCALER": "major"}
    findings = [finding(rule, severities[rule], n) for n, rule in enumerate(mix)]
    assert len(findings) == 20
    assert score(findings, lines=3_000) >= 75.0


def test_one_blocker_in_library_code_caps_the_score_at_85_whatever_the_size() -> None:
    for lines in (1_000, 100_000, 2_000_000):
        assert score([finding("KERNEL", "blocker")], lines=lines) <= 85.0
    assert score([finding("KERNEL", "blocker", role="test")]) > 85.0
    assert score([finding("KERNEL", "blocker", guarded=True)]) > score([finding("KERNEL", "blocker")])


def test_a_kernel_library_scores_25_or_less() -> None:
    findings = [finding("KERNEL", "blocker", n) for n in range(24)]
    findings += [finding("EXT", "blocker", 100 + n) for n in range(3)]
    findings += [finding("INC", "blocker", 200 + n) for n in range(12)]
    assert score(findings, lines=40_000) <= 25.0


def test_same_findings_cost_less_in_a_larger_repo() -> None:
    ten = [finding("DEV", "major", n) for n in range(10)]
    assert score(ten, lines=300_000) > score(ten, lines=2_000)


def test_plan_orders_by_gain_per_hour_and_effort_sums() -> None:
    result = compute_score([finding("DEV", "major", n) for n in range(4)] + [finding("KERNEL", "blocker")], 5_000, {**EFFORT, "KERNEL": (16, 80, "occurrence")}, FIXES)
    assert [item.rule for item in result.plan] == ["DEV", "KERNEL"]
    assert (result.effort.low, result.effort.high) == (17.0, 82.0)
    assert all(item.score_gain > 0 for item in result.plan)
    assert result.plan[-1].score_after == 100.0
    assert result.plan[0].score_after == round(result.score + result.plan[0].score_gain, 1)
