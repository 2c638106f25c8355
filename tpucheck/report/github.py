"""GitHub Actions workflow commands: findings as annotations on the pull request diff.

GitHub shows at most 10 annotations of each level per step and drops the rest silently,
so the most severe findings go first, each level is capped here, and one closing notice
says how much was left out instead of letting GitHub lose it without a word.
"""

from __future__ import annotations

from typing import TextIO

from tpucheck.findings import Finding, ScanError, severity_rank
from tpucheck.report.judgement import target_label
from tpucheck.report.options import ReportOptions
from tpucheck.result import ScanResult

LEVELS: dict[str, str] = {"blocker": "error", "major": "warning", "minor": "notice", "info": "notice"}
PER_LEVEL = 10
"""GitHub's per-step display limit for each of error, warning and notice."""


def escape_data(text: str) -> str:
    """The message part: without this a newline in it would start a new workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Property values also end at ',' and '::', so those are escaped too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, properties: dict[str, object], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{level} {props}::{escape_data(message)}" if props else f"::{level}::{escape_data(message)}"


def finding_line(finding: Finding) -> str:
    span = finding.span
    message = finding.message
    if finding.cell is not None:
        message = f"[notebook cell {finding.cell}; lines are relative to the cell] {message}"
    return _command(
        LEVELS[finding.severity],
        {
            "file": finding.path,
            "line": span.line,
            "col": span.column,
            "endLine": span.end_line,
            "endColumn": span.end_column,
            "title": f"{finding.rule} {finding.name}",
        },
        message,
    )


def error_line(error: ScanError) -> str:
    return _command("warning", {"file": error.path}, f"tpucheck could not analyze this file: {error.message}")


def _select(candidates: list[tuple[str, str]], notice_budget: int) -> list[str]:
    budget = {"error": PER_LEVEL, "warning": PER_LEVEL, "notice": notice_budget}
    kept = []
    for level, line in candidates:
        if budget[level] > 0:
            budget[level] -= 1
            kept.append(line)
    return kept


def render(result: ScanResult) -> str:
    """Active findings, most severe first (the result's order within a severity), then scan
    errors; suppressed findings are left out. Each level is capped at GitHub's limit, and
    when anything is cut one notice slot is kept for the line that says so."""
    ranked = sorted(result.findings, key=lambda f: severity_rank(f.severity))
    candidates = [(LEVELS[f.severity], finding_line(f)) for f in ranked]
    findings_count = len(candidates)
    candidates += [("warning", error_line(e)) for e in result.errors]
    kept = _select(candidates, PER_LEVEL)
    if len(kept) < len(candidates):
        kept = _select(candidates, PER_LEVEL - 1)
        # Findings precede errors, so the findings alone get the budget first.
        shown_findings = len(_select(candidates[:findings_count], PER_LEVEL - 1))
        shown_errors = len(kept) - shown_findings
        hidden_findings = findings_count - shown_findings
        hidden_errors = len(result.errors) - shown_errors
        parts = []
        if hidden_findings:
            parts.append(f"{hidden_findings} more finding{'s' if hidden_findings != 1 else ''}")
        if hidden_errors:
            parts.append(f"{hidden_errors} more scan error{'s' if hidden_errors != 1 else ''}")
        kept.append(
            _command(
                "notice",
                {},
                f"tpucheck ({target_label(result.target)} target, score {result.score.score:.1f}): {' and '.join(parts)} not shown "
                f"(GitHub shows at most {PER_LEVEL} annotations per level); "
                "see the full report (--format json or --format sarif).",
            )
        )
    return "".join(line + "\n" for line in kept)


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    stream.write(render(result))
