"""The default report: what a person reads first when deciding whether to migrate.

Order follows DESIGN.md: the inventory (kernels, CUDA-only packages, training versus
inference), then the score and what it costs to fix, then where the work is, then the
findings themselves, then what could not be read; and, as ruff, semgrep and bandit do, it
ends with the verdict, so the last line on screen is the one a user came for.

Everything is laid out to the terminal's width (or `COLUMNS`, or 80): lists whose text
wraps at spaces rather than many-column tables, so nothing is cut mid-word at 80 columns.
"""

from __future__ import annotations

import io
import os
import re
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tpucheck import __version__
from tpucheck.findings import SEVERITIES, Finding, severity_rank
from tpucheck.judge.score import PHASE_TITLES
from tpucheck.report.concise import line_safe_path
from tpucheck.report.judgement import effort_apart, hours, phase_summary, plan_phases, set_aside_text, step_label, target_label, why_line
from tpucheck.report.options import ReportOptions
from tpucheck.report.prose import first_sentence, shorten
from tpucheck.result import ScanResult

SEVERITY_STYLE = {"blocker": "bold red", "major": "yellow", "minor": "cyan", "info": "dim"}
GRADE_STYLE = {"A": "bold green", "B": "green", "C": "yellow", "D": "red", "F": "bold red"}
MAX_ROWS = 10
MAX_STEPS_PER_PHASE = 5
_TRAILING_SPACE = re.compile(r"(?: |\x1b\[[0-9;]*m)+$")
"""Spaces at the end of a line, before any closing colour codes."""
SOURCE_CONTEXT = 2
"""Lines shown before and after a finding with `--show-source`."""


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    options = options or ReportOptions()
    buffer = io.StringIO()
    # markup=False: paths, snippets and messages are data; `[/b]` in a path is not a tag
    # (with markup on, a file `a[/b].py` raised MarkupError and the report was lost).
    console = Console(
        file=buffer,
        force_terminal=options.colour,
        no_color=not options.colour,
        width=options.columns(),
        highlight=False,
        soft_wrap=False,
        markup=False,
        emoji=False,
    )
    for block in _blocks(result, options):
        console.print(block, crop=False)  # a long path runs past the width, never cut
    # Rich pads every row of a grid to the full width; a copied report should not carry that.
    stream.write("".join(_TRAILING_SPACE.sub(lambda tail: tail.group().replace(" ", ""), line) + "\n" for line in buffer.getvalue().splitlines()))


def _blocks(result: ScanResult, options: ReportOptions) -> list[RenderableType]:
    coverage = result.coverage
    blocks: list[RenderableType] = [
        Text.assemble(
            ("tpucheck ", "bold"), (__version__, "dim"), " · ", (result.root, "bold"),
            f" · {plural(coverage.files_analyzed, 'file')}, {plural(coverage.lines_scanned, 'line')} · target ", (target_label(result.target), "bold"),
        ),
        _inventory(result),
    ]
    if result.trace is not None:
        blocks.append(Text(result.trace.sentence()))
    scope = result.gate_scope()
    if result.findings:
        blocks.append(_category_table(result))
        blocks.append(_plan(result, options))
        blocks.append(_top_files(result, options))
        if options.statistics:
            blocks.append(_statistics(result))  # instead of the list, as `ruff --statistics`
        else:
            blocks.append(_findings(result.gated_findings() if scope else result.findings, result, options))
    blocks.extend(_problems(result, options))
    blocks.append(_coverage_line(result))
    blocks.extend(_verdict(result, scope))
    return blocks


def _inventory(result: ScanResult) -> Panel:
    inventory = result.inventory
    lines = Table.grid(padding=(0, 2))
    lines.add_column(style="bold", no_wrap=True)
    lines.add_column()
    kernels = inventory.ported_kernels
    if kernels:
        named = [k.name or f"{k.path}:{k.line}" for k in kernels]
        shown = ", ".join(named[:8]) + (f", … (+{len(named) - 8})" if len(named) > 8 else "")
        lines.add_row("Custom kernels", f"{len(kernels)}: {shown}")
    else:
        lines.add_row("Custom kernels", "none")
    names = sorted({p.name for p in inventory.packages})
    lines.add_row("CUDA-only packages", ", ".join(names) if names else "none")
    if inventory.tpu_support:
        lines.add_row("TPU support already", ", ".join(f"{t.name} ({len(t.paths)} files)" for t in inventory.tpu_support))
    lines.add_row("Work by workload", f"training {inventory.training_findings} findings · inference {inventory.inference_findings} findings")
    return Panel(lines, title="Inventory", title_align="left", expand=False)


def _category_table(result: ScanResult) -> Table:
    table = Table(title="Findings by category", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("category", no_wrap=True)
    for severity in SEVERITIES:
        table.add_column(severity, justify="right", style=SEVERITY_STYLE[severity], no_wrap=True)
    table.add_column("total", justify="right", style="bold", no_wrap=True)
    for category, row in result.counts_by_category_and_severity().items():
        total = sum(row.values())
        if total:
            table.add_row(category, *(str(row[s] or "") for s in SEVERITIES), str(total))
    return table


def _hanging(label: Text, body: RenderableType, indent: int) -> Table:
    """`label body...` with the body's continuation lines under its first word: a list item
    that wraps at spaces, whatever the width."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=indent, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(label, body)
    return grid


def plural(count: int, noun: str) -> str:
    """`1 file`, `2 files`, `1,631 lines`."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _plan(result: ScanResult, options: ReportOptions) -> Group:
    rows: list[RenderableType] = [Text("Migration plan, in phases (the score reached once each step is done)", style="bold underline")]
    number = 0
    for phase, items in plan_phases(result.score.plan):
        rows.append(Text.assemble((PHASE_TITLES[phase], "bold"), f": {phase_summary(items)}"))
        for item in items[:MAX_STEPS_PER_PHASE]:
            number += 1
            body = Text.assemble(
                (step_label(item), "bold"),
                " · ", (item.severity, SEVERITY_STYLE[item.severity]),
                f" · {hours(item.effort)} · {item.score_after:.1f} (+{item.score_gain:.1f})",
                ("\n" + first_sentence(item.fix), "dim") if item.fix and options.verbose else "",
            )  # fmt: skip
            rows.append(_hanging(Text(f"{number:>3}."), body, 4))
        if len(items) > MAX_STEPS_PER_PHASE:
            rows.append(_hanging(Text(""), Text(f"… {len(items) - MAX_STEPS_PER_PHASE} more steps in this phase (JSON report)", style="dim"), 4))
        number += max(0, len(items) - MAX_STEPS_PER_PHASE)
    return Group(*rows)


def _top_files(result: ScanResult, options: ReportOptions) -> Group:
    rows: list[RenderableType] = [Text("Top files (blocker / major / minor)", style="bold underline")]
    for path, role, counts in result.files_by_severity()[:MAX_ROWS]:
        numbers = Text.assemble(*[(f"{counts[s]:>3} ", SEVERITY_STYLE[s]) for s in SEVERITIES[:3]])
        # a path is never split inside a name (an editor's click-to-open needs it whole):
        # one that does not fit runs past the width
        rows.append(_unwrapped(Text.assemble(numbers, " ", line_safe_path(path), (f" ({role})" if role != "library" else "", "dim"))))
    return Group(*rows)


def _unwrapped(text: Text) -> Text:
    text.no_wrap, text.overflow = True, "ignore"
    return text


def _location(finding: Finding, options: ReportOptions) -> str:
    path = line_safe_path(finding.path)
    if finding.cell is not None:
        return f"{path}[cell {finding.cell}]:{finding.span.line}:{finding.span.column}"
    return f"{path}:{finding.span.line}:{finding.span.column}"


def _findings(findings: list[Finding], result: ScanResult, options: ReportOptions) -> Group:
    ordered = sorted(findings, key=lambda f: (severity_rank(f.severity), f.sort_key()))
    limit = len(ordered) if options.max_findings is None else options.max_findings
    rows: list[RenderableType] = [Text("Findings", style="bold underline")]
    if not (options.verbose or options.show_source):
        return _finding_lines(ordered, limit, options)
    for finding in ordered[:limit]:
        body = Text.assemble(
            (_location(finding, options), "bold"),
            " ",
            (f"{finding.rule} {finding.name}", "magenta"),
            (" (fallback kept)" if finding.guarded else "", "dim"),
            f"\n{first_sentence(finding.message)}",
        )
        source = _source(result, finding) if options.show_source else [Text(_printable(finding.snippet), style="dim")]
        for line in source:  # code is cropped, never wrapped into something it is not
            line.no_wrap, line.overflow = True, "ellipsis"
        because = [Text(f"because {reason.rule}: {_printable(reason.evidence)}", style="dim") for reason in finding.because]
        rows.append(_hanging(Text(finding.severity, style=SEVERITY_STYLE[finding.severity]), Group(body, *source, *because), 7))
    if len(ordered) > limit:
        rows.append(Text(f"… and {len(ordered) - limit} more: --show-all lists them, --format json -o FILE keeps them", style="dim"))
    return Group(*rows)


def _finding_lines(ordered: list[Finding], limit: int, options: ReportOptions) -> Group:
    """One line per finding, as ruff prints them (`path:line:col: RULE [severity] name`),
    then each rule's text once. A line that would not fit loses the rule's name first; the
    path is never cut or split, so a long one runs past the width."""
    width = options.columns()
    rows: list[RenderableType] = [Text("Findings", style="bold underline")]
    for finding in ordered[:limit]:
        location = f"{_location(finding, options)}: "
        head = Text.assemble((location, "bold"), (finding.rule, "magenta"), " ", (f"[{finding.severity}]", SEVERITY_STYLE[finding.severity]))
        for tail in (f" {finding.name}" + (" (fallback kept)" if finding.guarded else ""), f" {finding.name}"):
            if len(head) + len(tail) <= width:
                head.append(tail, style="dim")
                break
        rows.append(_unwrapped(head))
    if len(ordered) > limit:
        rows.append(Text(f"… and {len(ordered) - limit:,} more: --show-all lists them, --format json -o FILE keeps them", style="dim"))
    rules: dict[str, Finding] = {}
    for finding in ordered[:limit]:
        rules.setdefault(finding.rule, finding)
    rows.append(Text("Rules above (`tpucheck explain RULE` for more, --verbose for each finding)", style="bold"))
    for rule, finding in sorted(rules.items()):
        rows.append(_unwrapped(Text.assemble((rule, "magenta"), f" {finding.name}: ", (shorten(first_sentence(finding.message), max(20, width - len(rule) - len(finding.name) - 3)), "dim"))))
    return Group(*rows)


def _source(result: ScanResult, finding: Finding) -> list[Text]:
    """The lines around a finding, numbered, the finding's own marked: read from the tree
    when asked (`--show-source`); a file that changed or vanished since shows its snippet."""
    lines: list[str] | None = None
    if finding.cell is None:
        try:
            # Paths are shown from the current folder (reports/paths.py) or from the root.
            shown = finding.path if os.path.isfile(finding.path) else os.path.join(result.root, finding.path)
            with open(shown, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            lines = None
    if not lines or finding.span.line > len(lines):
        return [Text(_printable(finding.snippet), style="dim")]
    first = max(1, finding.span.line - SOURCE_CONTEXT)
    last = min(len(lines), finding.span.end_line + SOURCE_CONTEXT)
    width = len(str(last))
    out = []
    for number in range(first, last + 1):
        marked = finding.span.line <= number <= finding.span.end_line
        out.append(Text(f"{number:>{width}} {'>' if marked else '|'} {_printable(lines[number - 1])}", style="" if marked else "dim"))
    return out


def _statistics(result: ScanResult) -> Group:
    """One line per rule, most findings first: `ruff --statistics`' view of a tree."""
    counts: dict[str, tuple[int, str, str]] = {}
    for finding in result.findings:
        count, _, _ = counts.get(finding.rule, (0, "", ""))
        counts[finding.rule] = (count + 1, finding.name, finding.severity)
    rows: list[RenderableType] = [Text("Statistics (findings per rule)", style="bold underline")]
    for rule, (count, name, severity) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0])):
        rows.append(Text.assemble(f"{count:>6}  ", (f"{rule:<7}", "magenta"), f"{name} ", (f"[{severity}]", SEVERITY_STYLE[severity])))
    return Group(*rows)


def _printable(text: str) -> str:
    """Source text as the terminal may show it: a control character in a string literal
    (an escape sequence) is spelled as its Python escape instead of acting on the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _problems(result: ScanResult, options: ReportOptions) -> list[RenderableType]:
    blocks: list[RenderableType] = []
    if result.errors:
        rows: list[RenderableType] = [Text(f"Files that could not be analyzed ({len(result.errors):,})", style="bold underline")]
        for error in result.errors[:20]:
            rows.append(_unwrapped(Text.assemble((line_safe_path(error.path), "bold"), ": ", (error.kind, "yellow"))))
            rows.append(_hanging(Text(""), Text(error.message, style="dim"), 2))
        if len(result.errors) > 20:
            rows.append(Text(f"… and {len(result.errors) - 20} more (JSON report)", style="dim"))
        blocks.append(Group(*rows))
    if result.skipped:
        shown = "; ".join(f"{line_safe_path(s.path)} ({s.reason})" for s in result.skipped[:5]) + (" …" if len(result.skipped) > 5 else "")
        blocks.append(Text(f"Skipped {plural(len(result.skipped), 'file')}: {shown}", style="yellow"))
    return blocks


def _coverage_line(result: ScanResult) -> Text:
    c = result.coverage
    aside = set_aside_text(result)
    # Written as the identity every file satisfies, so a reader can check nothing was lost.
    return Text(
        f"Coverage: {plural(c.files_found, 'file')} found = {c.files_analyzed:,} analyzed ({c.files_parsed:,} parsed, {c.files_screened:,} screened out by the prefilter)"
        f" + {plural(c.files_errored, 'error')} + {c.files_skipped:,} skipped; {plural(len(result.suppressed), 'finding')} suppressed"
        + (f"; {aside} (JSON report: set_aside)" if aside else ""),
        style="dim",
    )


def _verdict(result: ScanResult, scope: str | None) -> list[RenderableType]:
    """The last lines: why, then score, grade, effort, counts, target (the CLI prints any
    configuration error after them, on stderr, so a run that exits 2 ends with why)."""
    score = result.score
    grade_style = GRADE_STYLE.get(score.grade, "bold")
    counts = result.counts_by_severity()
    blocks: list[RenderableType] = []
    why = why_line(result)
    if why:
        blocks.append(Text.assemble(("Why this score: ", "bold"), why))
    if scope:
        blocks.append(Text.assemble(("Gate: ", "bold"), scope, " (the findings listed are the new ones)"))
    if not result.findings:
        blocks.append(Text("No findings: nothing in this tree ties it to CUDA.", style="green"))
    supporting = "".join(f" + {part}" for part in effort_apart(score))
    blocks.append(
        Panel(
            Text.assemble(
                ("TPU readiness ", "bold"), (f"{score.score:.1f}/100", grade_style), "  grade ", (score.grade, grade_style),
                f" ({score.grade_meaning})",
                f"\neffort {hours(score.effort)}{supporting} · training {score.training:.1f} · inference {score.inference:.1f}",
                "\n", ", ".join(f"{counts[s]} {s}" for s in SEVERITIES), f" · target {target_label(result.target)}",
            ),
            expand=False,
        )
    )
    return blocks
