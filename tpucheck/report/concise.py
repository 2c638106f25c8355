"""One line per finding, ruff-style: the format for pre-commit hooks, editors and grep.

    pkg/train.py:12:5: CA001 [major] `torch.cuda.synchronize()` raises "Torch not compiled with…
    notebooks/explore.ipynb:cell 3:2:1: CA007 [minor] ...
    pkg/broken.py: could not analyze (syntax-error): syntax error at line 2, column 1: ...
    3 findings (1 blocker, 2 major) in 15 files; score 71.2 (grade C, target torchtpu)

* Positions are `path:line:col` (1-based, columns in characters), so editors and problem
  matchers can jump to them. A notebook finding reads `path:cell N:line:col`, as ruff
  writes it: the line and column count within cell N (every cell counts, Markdown too).
* The message is its gist, at most 72 characters: the first sentence of the rule's message
  without its parenthetical asides, as many of its clauses as fit (`report/prose.brief`);
  `tpucheck explain RULE` has the rest. Findings come in the result's order (path, cell,
  line, column, rule).
* Only the findings the gate judges are listed: those the baseline holds (known debt) and
  those outside the lines changed since `--diff-base` are counted in the summary, not
  listed, since they are not what this change must fix. The summary is always the last line.
* Files that could not be analyzed, and problems in config, rule or baseline files, get a
  line each after the findings.
* Every line is exactly one line: CR, LF and every other control character in a path,
  message or error (C0, DEL, C1, and the Unicode line/paragraph separators that
  `str.splitlines` also breaks on) are written as escapes such as `\\n` or `\\x1b`, so a
  hostile file name can neither start a fake finding line nor send terminal escapes.
* Colour (ANSI) only when asked for, and only around text that was escaped first.
"""

from __future__ import annotations

import re
from typing import TextIO

from tpucheck.findings import Finding, ScanError
from tpucheck.report.options import ReportOptions
from tpucheck.report.prose import brief
from tpucheck.result import ScanResult

_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

_RESET = "\x1b[0m"
_STYLE = {
    "path": "\x1b[1m",
    "rule": "\x1b[1;35m",
    "blocker": "\x1b[1;31m",
    "major": "\x1b[33m",
    "minor": "\x1b[36m",
    "info": "\x1b[2m",
    "error": "\x1b[31m",
}
"""The terminal report's palette (bold red blockers, yellow majors, cyan minors, dim info)."""


def escape(text: str) -> str:
    """Write control characters as visible escapes so the text stays on one line.

    Backslashes are left alone: the aim is that data cannot break the line structure or
    drive the terminal, not a reversible encoding (the JSON report has the exact text).
    """
    return _CONTROL.sub(_escape_one, text)


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def line_safe_path(path: str) -> str:
    """A path that can start a line: escaped, and `./`-prefixed when it starts with `:`, so a
    file named `::error::x.py` cannot become a GitHub Actions workflow command in a CI log."""
    shown = escape(path)
    return "./" + shown if shown.startswith(":") else shown


def _paint(text: str, style: str, colour: bool) -> str:
    return f"{_STYLE[style]}{text}{_RESET}" if colour else text


def location(finding: Finding) -> str:
    """`path:line:col`, or `path:cell N:line:col` for a notebook cell (ruff's form)."""
    span = finding.span
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{line_safe_path(finding.path)}:{cell}{span.line}:{span.column}"


def finding_line(finding: Finding, colour: bool = False) -> str:
    return (
        f"{_paint(location(finding), 'path', colour)}: "
        f"{_paint(escape(finding.rule), 'rule', colour)} "
        f"{_paint(f'[{finding.severity}]', finding.severity, colour)} "
        f"{escape(brief(finding.message))}"
    )


def error_line(error: ScanError, colour: bool = False, what: str = "could not analyze") -> str:
    return f"{_paint(line_safe_path(error.path), 'path', colour)}: {_paint(what, 'error', colour)} ({escape(error.kind)}): {escape(error.message)}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(result: ScanResult) -> str:
    """`N findings (B blocker, M major, ...) in F files; score S (grade G)`.

    N counts the listed (gated) findings and F the files analyzed; the findings left out
    (baselined, outside the diff), the files that could not be analyzed or were skipped,
    and configuration problems are added only when there are any.
    """
    listed = result.gated_findings()
    counts = result.counts_by_severity(listed)
    head = _plural(len(listed), "finding")
    by_severity = ", ".join(f"{n} {severity}" for severity, n in counts.items() if n)
    if by_severity:
        head += f" ({by_severity})"
    head += f" in {_plural(result.coverage.files_analyzed, 'file')}"
    hidden = [f"{n} {label}" for n, label in ((result.baselined_count(), "baselined"), (result.outside_diff_count(), "outside the diff")) if n]
    if hidden:
        head += f" (not listed: {', '.join(hidden)})"
    parts = [head]
    if result.errors:
        parts.append(f"{_plural(len(result.errors), 'file')} could not be analyzed")
    if result.skipped:
        parts.append(f"{_plural(len(result.skipped), 'file')} skipped")
    if result.configuration_errors:
        parts.append(_plural(len(result.configuration_errors), "configuration error"))
    parts.append(f"score {result.score.score:.1f} (grade {result.score.grade}, target {result.target})")
    return "; ".join(parts)


def render(result: ScanResult, colour: bool = False) -> str:
    """Finding lines, scan-error lines, configuration-error lines, then the summary;
    newline-terminated."""
    lines = [finding_line(f, colour) for f in result.gated_findings()]
    lines += [error_line(e, colour) for e in result.errors]
    lines += [error_line(e, colour, "configuration error") for e in result.configuration_errors]
    lines.append(summary_line(result))
    return "".join(line + "\n" for line in lines)


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    stream.write(render(result, (options or ReportOptions()).colour))
