"""GitHub-flavoured Markdown: the report a pull-request comment or `$GITHUB_STEP_SUMMARY` shows.

Same content and order as the terminal report, shaped for review tools:

* delta-friendly: no timestamps, no absolute scan root, fixed column order, one row per
  line, so the comment of two runs diffs line by line;
* bounded: GitHub refuses a step summary over 1 MiB, so the long tables (all findings,
  errors, skipped, suppressed) stop adding rows once the document nears `SIZE_LIMIT`
  and say how many rows were left out;
* inert: everything that comes from scanned code, paths or rule text is escaped, so a
  snippet such as `</details><script>` cannot close our `<details>`, inject HTML, break a
  table row, or ping `@someone` / link `#123` in a PR comment.

Like every report it only formats: the score, plan, ranking and counts come from the
ScanResult as they are.
"""

from __future__ import annotations

import re
from typing import TextIO
from urllib.parse import quote

from tpucheck.findings import SEVERITIES, Finding, severity_rank
from tpucheck.judge.score import PHASE_TITLES
from tpucheck.report.judgement import effort_apart, hours, target_label, why_line
from tpucheck.report.options import ReportOptions
from tpucheck.report.prose import first_sentence, shorten
from tpucheck.result import ScanResult

MAX_ROWS = 10
"""Rows of the plan and top-files tables: a PR comment is read, not searched."""

MAX_KERNELS = 50
"""Kernels listed in the inventory before summarising the rest as a count."""

SIZE_LIMIT = 65_536
"""Bytes (UTF-8) the document may reach by default: GitHub refuses a pull-request comment
over 65,536 characters, and bytes are never fewer than characters. Read at call time so
tests can lower it."""


_RESERVE = 2_000
"""Bytes kept back from SIZE_LIMIT for `<details>` wrappers and "left out" lines."""

SNIPPET_LIMIT = 100
MESSAGE_LIMIT = 120
FIX_LIMIT = 80


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    """Write the report; colour options are ignored because Markdown carries no terminal colour."""
    limit = (options or ReportOptions()).size_limit
    stream.write(render(result, limit))


def render(result: ScanResult, limit: int | None = None) -> str:
    """The whole document as one string, ending in a newline, within `limit` bytes (the
    long tables are cut, most important rows first, and say where the rest is)."""
    head = _headline(result) + _inventory(result)
    if result.findings:
        head += _category_table(result) + _plan_table(result) + _top_files(result)
    else:
        head += ["No findings: nothing in this tree ties it to CUDA.", ""]
    tail = [_coverage_line(result)]
    budget = _Budget((limit or SIZE_LIMIT) - _RESERVE - _size(head) - _size(tail))
    middle: list[str] = []
    if result.findings:
        middle += _all_findings(result, budget)
    middle += _errors(result, budget)
    middle += _skipped(result, budget)
    middle += _suppressed(result, budget)
    return "\n".join(head + middle + tail) + "\n"


class _Budget:
    """Bytes still free for table rows, shared by the long tables in document order."""

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining

    def take(self, line: str) -> bool:
        """Spend the line's bytes (plus its newline) if they fit; False once they do not."""
        cost = len(line.encode("utf-8")) + 1
        if cost > self.remaining:
            self.remaining = 0  # once a row is dropped, later rows are too: no gaps
            return False
        self.remaining -= cost
        return True


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


# --- sections -------------------------------------------------------------------------


def _headline(result: ScanResult) -> list[str]:
    score = result.score
    coverage = result.coverage
    supporting = f" (+ {' + '.join(effort_apart(score))})" if effort_apart(score) else ""
    why = why_line(result)
    return [
        (
            f"**TPU readiness {score.score:.1f}/100 ({_escape(score.grade)}: {_escape(score.grade_meaning)})**"
        f" · target {_escape(target_label(result.target))}"
        f" · effort {_escape(hours(score.effort))}{' ' + _escape(supporting.strip()) if supporting else ''}"
        f" · training {score.training:.1f} · inference {score.inference:.1f}"
        f" · {coverage.files_analyzed:,} files, {coverage.lines_scanned:,} lines scanned"
        ),
        "",
        *([f"**Why this score:** {_escape(why)}", ""] if why else []),
        *([f"**Gate:** {_escape(scope)}", ""] if (scope := result.gate_scope()) else []),
        *([f"**Run:** {_escape(result.trace.sentence())}", ""] if result.trace is not None else []),
    ]


def _inventory(result: ScanResult) -> list[str]:
    inventory = result.inventory
    lines = ["### Inventory", ""]
    kernels = inventory.ported_kernels
    lines += [f"**Custom kernels:** {len(kernels) or 'none'}", ""]
    for kernel in kernels[:MAX_KERNELS]:
        name = _code(kernel.name) if kernel.name else "(unnamed)"
        lines.append(f"- {_code(f'{kernel.path}:{kernel.line}')} {name}")
    if len(kernels) > MAX_KERNELS:
        lines.append(f"- … and {len(kernels) - MAX_KERNELS} more")
    if kernels:
        lines.append("")
    lines += [f"**CUDA-only packages:** {len(inventory.packages) or 'none'}", ""]
    for package in inventory.packages:
        lines.append(f"- {_code(package.name)} ({package.occurrences} {_plural(package.occurrences, 'use')}): {_prose(package.fix, FIX_LIMIT * 2)}")
    if inventory.packages:
        lines.append("")
    if inventory.tpu_support:
        shown = ", ".join(f"{_code(t.name)} ({len(t.paths)} {_plural(len(t.paths), 'file')})" for t in inventory.tpu_support)
        lines += [f"**TPU support already in the code:** {shown}", ""]
    lines += [f"**Work by workload:** training {inventory.training_findings} findings · inference {inventory.inference_findings} findings", ""]
    return lines


def _category_table(result: ScanResult) -> list[str]:
    """Category × severity tallies; only categories with findings, in the fixed CATEGORIES order."""
    counts = result.counts_by_category_and_severity()
    lines = ["### Findings by category", "", _row(["category", *SEVERITIES, "total"]), _rule_row(["l", *"r" * (len(SEVERITIES) + 1)])]
    for category, row in counts.items():
        total = sum(row.values())
        if total:
            lines.append(_row([_escape(category), *(str(row[s]) for s in SEVERITIES), str(total)]))
    by_severity = result.counts_by_severity()
    lines.append(_row(["**total**", *(str(by_severity[s]) for s in SEVERITIES), f"**{len(result.findings)}**"]))
    return [*lines, ""]


def _plan_table(result: ScanResult) -> list[str]:
    plan = result.score.plan
    links = result.help_links()
    lines = [
        "### Migration plan",
        "",
        "In phases; within a phase, most cost removed per hour first. *score* is the score reached once the step is done.",
        "",
        _row(["#", "phase", "step", "severity", "score", "effort h", "fix"]),
        _rule_row(["r", "l", "l", "l", "r", "r", "l"]),
    ]
    for number, item in enumerate(plan[:MAX_ROWS], start=1):
        lines.append(
            _row(
                [
                    str(number),
                    _escape(PHASE_TITLES[item.phase]),
                    f"{_link(item.rule, links.get(item.rule))} {_escape(item.title)}" if item.findings else _escape(item.title),
                    _escape(item.severity),
                    f"{item.score_after:.1f} (+{item.score_gain:.1f})",
                    f"{item.effort.low:.1f}–{item.effort.high:.1f}",
                    _prose(item.fix, FIX_LIMIT),
                ]
            )
        )
    lines.append("")
    if len(plan) > MAX_ROWS:
        lines += [f"{len(plan) - MAX_ROWS} more steps in the JSON report.", ""]
    return lines


def _top_files(result: ScanResult) -> list[str]:
    lines = ["### Top files", "", _row(["file", "role", *SEVERITIES]), _rule_row(["l", "l", *"r" * len(SEVERITIES)])]
    for path, role, counts in result.files_by_severity()[:MAX_ROWS]:
        lines.append(_row([_code(path), _escape(role), *(str(counts[s]) for s in SEVERITIES)]))
    return [*lines, ""]


def _all_findings(result: ScanResult, budget: _Budget) -> list[str]:
    ordered = sorted(result.findings, key=lambda f: (severity_rank(f.severity), f.sort_key()))
    links = result.help_links()
    rows = [
        _row(
            [
                _escape(f.severity),
                _link(f.rule, links.get(f.rule)),
                _location(f),
                _prose(first_sentence(f.message), MESSAGE_LIMIT) + (" (fallback kept)" if f.guarded else ""),
                _code(f.snippet, SNIPPET_LIMIT),
            ]
        )
        for f in ordered
    ]
    return _details(
        f"All {len(ordered)} {_plural(len(ordered), 'finding')}",
        [_row(["severity", "rule", "location", "message", "snippet"]), _rule_row(["l"] * 5)],
        rows,
        budget,
    )


def _errors(result: ScanResult, budget: _Budget) -> list[str]:
    if not result.errors:
        return []
    rows = [_row([_code(e.path), _escape(e.kind), _escape(e.message, MESSAGE_LIMIT * 2)]) for e in result.errors]
    return _details(f"{len(rows)} {_plural(len(rows), 'file')} could not be analyzed", [_row(["file", "kind", "reason"]), _rule_row(["l"] * 3)], rows, budget)


def _skipped(result: ScanResult, budget: _Budget) -> list[str]:
    if not result.skipped:
        return []
    rows = [_row([_code(s.path), _escape(s.reason, MESSAGE_LIMIT)]) for s in result.skipped]
    return _details(f"{len(rows)} {_plural(len(rows), 'file')} skipped", [_row(["file", "reason"]), _rule_row(["l"] * 2)], rows, budget)


def _suppressed(result: ScanResult, budget: _Budget) -> list[str]:
    if not result.suppressed:
        return []
    links = result.help_links()
    rows = [
        _row(
            [
                _link(f.rule, links.get(f.rule)),
                _location(f),
                _escape(f.suppression_reason, MESSAGE_LIMIT) if f.suppression_reason else "(no reason given)",
            ]
        )
        for f in result.suppressed
    ]
    return _details(f"{len(rows)} {_plural(len(rows), 'finding')} suppressed", [_row(["rule", "location", "reason"]), _rule_row(["l"] * 3)], rows, budget)


def _coverage_line(result: ScanResult) -> str:
    c = result.coverage
    return (
        f"Coverage: {c.files_found} files found, {c.files_analyzed} analyzed "
        f"({c.files_parsed} parsed, {c.files_screened} screened out by the prefilter), "
        f"{c.files_errored} errors, {c.files_skipped} skipped, {len(result.suppressed)} findings suppressed."
    )


def _details(summary: str, header: list[str], rows: list[str], budget: _Budget) -> list[str]:
    """A collapsed table; rows are added while the shared budget lasts, the rest are counted."""
    lines = [f"<details><summary>{summary}</summary>", "", *header]
    for header_line in header:
        budget.take(header_line)
    shown = 0
    for row in rows:
        if not budget.take(row):
            break
        lines.append(row)
        shown += 1
    lines.append("")
    if shown < len(rows):
        left = len(rows) - shown
        lines += [f"{left} {_plural(left, 'row')} left out to stay under GitHub's size limit; see `--format json` for all of them.", ""]
    return [*lines, "</details>", ""]


# --- cells and escaping ---------------------------------------------------------------


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _rule_row(alignments: list[str]) -> str:
    return "|" + "|".join(":---" if a == "l" else "---:" for a in alignments) + "|"


def _location(finding: Finding) -> str:
    where = _code(f"{finding.path}:{finding.span.line}:{finding.span.column}")
    return f"{where} [cell {finding.cell}]" if finding.cell is not None else where


def _link(text: str, uri: str | None) -> str:
    if not uri:
        return _escape(text)
    # Parentheses, spaces and angle brackets are percent-encoded so the URL cannot end the link early.
    return f"[{_escape(text)}]({quote(uri, safe=':/?#@!$&*+,;=%~.-_')})"


_MARKDOWN_ACTIVE = {c: "\\" + c for c in "\\`*_~[]|"}
"""Characters Markdown would read as emphasis, code, links or table cells: backslash-escaped
(GFM un-escapes `\\|` when splitting table cells, so a pipe stays inside its cell)."""

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "&#64;", "#": "&#35;"}
"""HTML-significant characters, plus `@` and `#` so no mention or issue reference forms."""

_PING = re.compile(r"(&#64;|&#35;)(?=[\w-])")


def _escape(text: str, limit: int | None = None, *, code: bool = False) -> str:
    """Make scanned text inert in a Markdown table cell or paragraph.

    Whitespace (newlines included) collapses to single spaces so a row stays one line;
    the text is shortened before escaping so no entity is cut in half. Outside code,
    an `@` or `#` followed by a word is also wrapped in `<code>`: GitHub's mention and
    issue-reference filters skip code but read decoded entities.
    """
    flat = " ".join(text.split())
    if limit is not None:
        flat = shorten(flat, limit)
    out = "".join(_HTML.get(c) or _MARKDOWN_ACTIVE.get(c) or c for c in flat)
    if not code:
        out = _PING.sub(r"<code>\1</code>", out)
    return out


_CODE_SPAN = re.compile(r"`([^`]+)`")


def _prose(text: str, limit: int | None = None) -> str:
    """Rule text (messages, fixes) with its `inline code` rendered as code and everything
    else escaped as `_escape` does; cut at a word before the spans are made, so a span is
    never left open."""
    flat = " ".join(text.split())
    if limit is not None and len(flat) > limit:
        flat = shorten(flat, limit)
        if flat.count("`") % 2:
            flat = flat[: flat.rfind("`")].rstrip() + "…"
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(flat):
        out.append(_escape_keeping_edges(flat[last : span.start()]))
        out.append(_code(span.group(1)))
        last = span.end()
    out.append(_escape_keeping_edges(flat[last:]))
    return "".join(out)


def _escape_keeping_edges(piece: str) -> str:
    """`_escape` trims; between code spans the spaces are the text's."""
    if not piece.strip():
        return " " if piece else ""
    lead = " " if piece[0] == " " else ""
    trail = " " if piece[-1] == " " else ""
    return lead + _escape(piece) + trail


def _code(text: str, limit: int | None = None) -> str:
    """Inline code as a `<code>` element: unlike a backtick span it decodes entities, so
    `<`, `@` and backticks can be escaped and still display as themselves."""
    return f"<code>{_escape(text, limit, code=True)}</code>" if text.strip() else ""




def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
