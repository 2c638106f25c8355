"""GitHub Actions annotations: exact commands, escaping that makes injection impossible,
and GitHub's per-level display cap."""

from __future__ import annotations

import dataclasses
import re

from tpucheck.findings import Finding, ScanError, Span
from tpucheck.judge.score import compute_score
from tpucheck.report import github
from tpucheck.result import Coverage, Inventory, ScanResult
from tpucheck.ruleset.loader import load_judgement


def finding(rule: str = "T001", severity: str = "major", path: str = "pkg/a.py", line: int = 3, message: str = "sync message",
            cell: int | None = None, suppressed: bool = False) -> Finding:
    return Finding(
        rule=rule, name="fixture-sync", category="cuda-api", severity=severity, confidence="high", path=path,
        span=Span(line, 5, line, 28), cell=cell, message=message, fix="tpu fix", affects=("training",), snippet="x",
        role="library", guarded=False, fingerprint="abc", suppressed=suppressed,
        suppression_reason="ok" if suppressed else None,
    )


def result_of(findings: list[Finding], suppressed: list[Finding] = (), errors: list[ScanError] = ()) -> ScanResult:
    # The report reads only the verdict of the score (in its overflow notice); the rest are placeholders.
    return ScanResult(
        root=".", findings=list(findings), suppressed=list(suppressed), errors=list(errors), skipped=[],
        coverage=Coverage(0, 0, 0, 0, 0, 0), score=compute_score([], {}, load_judgement()),
        inventory=Inventory((), (), 0, 0), rules=["T001"],
    )


def lines(result: ScanResult) -> list[str]:
    text = github.render(result)
    assert text.endswith("\n") or text == ""
    return text.splitlines()


def test_exact_lines() -> None:
    result = result_of(
        [finding(severity="minor", line=9), finding(severity="blocker", rule="T015", message="kernel"), finding(severity="info", line=1)],
        suppressed=[finding(suppressed=True)],
        errors=[ScanError("pkg/broken.py", "syntax", "invalid syntax at line 2")],
    )
    assert lines(result) == [
        "::error file=pkg/a.py,line=3,col=5,endLine=3,endColumn=28,title=T015 fixture-sync::kernel",
        "::notice file=pkg/a.py,line=9,col=5,endLine=9,endColumn=28,title=T001 fixture-sync::sync message",
        "::notice file=pkg/a.py,line=1,col=5,endLine=1,endColumn=28,title=T001 fixture-sync::sync message",
        "::warning file=pkg/broken.py::tpucheck could not analyze this file: invalid syntax at line 2",
    ]


def test_no_findings_no_output() -> None:
    assert github.render(result_of([])) == ""


def test_notebook_cell_in_message() -> None:
    (line,) = lines(result_of([finding(path="nb/x.ipynb", cell=2)]))
    assert line.startswith("::warning file=nb/x.ipynb,line=3,")
    assert line.endswith("::[notebook cell 2; lines are relative to the cell] sync message")


def test_escaping_blocks_injection() -> None:
    evil_path = "a::b,c%d\nx.py"
    evil_message = "bad::warning file=x::oops\r\n::error::pwned 100% %0A,done"
    (line,) = lines(result_of([finding(path=evil_path, message=evil_message)]))
    assert line == (
        "::warning file=a%3A%3Ab%2Cc%25d%0Ax.py,line=3,col=5,endLine=3,endColumn=28,title=T001 fixture-sync"
        "::bad::warning file=x::oops%0D%0A::error::pwned 100%25 %250A,done"
    )
    assert "\n" not in line and "\r" not in line
    # Only the command's own separator '::' after the properties; none inside the properties.
    head, _, _ = line[2:].partition("::")
    assert "::" not in head and "\n" not in head
    assert github.escape_property("%0A") == "%250A"
    assert github.escape_data("a\nb") == "a%0Ab"


def test_escaped_title() -> None:
    f = finding()
    f = dataclasses.replace(f, name="a,b:c")
    (line,) = lines(result_of([f]))
    assert ",title=T001 a%2Cb%3Ac::" in line


def test_per_level_cap_and_overflow_notice() -> None:
    findings = (
        [finding(severity="info", line=i) for i in range(1, 13)]
        + [finding(severity="major", line=i) for i in range(1, 14)]
        + [finding(severity="blocker", line=i) for i in range(1, 4)]
    )
    out = lines(result_of(findings, errors=[ScanError("pkg/broken.py", "syntax", "bad")]))
    levels = [re.match(r"::(\w+)", line).group(1) for line in out]
    # Most severe first, capped per level; one notice slot kept for the overflow line.
    assert levels == ["error"] * 3 + ["warning"] * 10 + ["notice"] * 10
    assert out[3].startswith("::warning file=pkg/a.py,line=1,")
    assert out[-1] == (
        "::notice::tpucheck (TorchTPU target, score 100.0): 6 more findings and 1 more scan error not shown (GitHub shows at most 10 annotations "
        "per level); see the full report (--format json or --format sarif)."
    )
    assert sum(line.startswith("::notice") for line in out) <= github.PER_LEVEL


def test_exactly_ten_per_level_needs_no_notice() -> None:
    out = lines(result_of([finding(severity="minor", line=i) for i in range(1, 11)]))
    assert len(out) == 10 and all(line.startswith("::notice file=") for line in out)
