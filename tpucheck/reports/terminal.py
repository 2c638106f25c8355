"""The default report: what a person reads first when deciding whether to migrate.

Order follows DESIGN.md: the inventory (kernels, CUDA-only packages, training versus
inference), then the score and what it costs to fix, then where the work is, then the
findings themselves, then what could not be read.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tpucheck import __version__
from tpucheck.findings import SEVERITIES, Finding, severity_rank
from tpucheck.prose import first_sentence, shorten
from tpucheck.reports.concise import line_safe_path
from tpucheck.reports.judgement import hours, phase_summary, plan_phases, target_label, why_line
from tpucheck.result import ScanResult
from tpucheck.scoring import PHASE_TITLES

SEVERITY_STYLE = {"blocker": "bold red", "major": "yellow", "minor": "cyan", "info": "dim"}
GRADE_STYLE = {"A": "bold green", "B": "green", "C": "yellow", "D": "red", "F": "bold red"}
MAX_FINDINGS = 40
MAX_ROWS = 10
MAX_STEPS_PER_PHASE = 5


def write(result: ScanResult, stream: TextIO, colour: bool = True) -> None:
    # markup=False: paths, snippets and messages are data; `[/b]` in a path is not a tag
    # (with markup on, a file `a[/b].py` raised MarkupError and the report was lost).
    console = Console(file=stream, force_terminal=colour, no_color=not colour, width=None if colour else 110, highlight=False, soft_wrap=False, markup=False)
    for block in _blocks(result):
        console.print(block)


def _blocks(result: ScanResult) -> list[object]:
    score = result.score
    coverage = result.coverage
    blocks: list[object] = [
        Text.assemble(
            ("tpucheck ", "bold"), (__version__, "dim"), " · ", (result.root, "bold"),
            f" · {coverage.files_analyzed} files, {coverage.lines_scanned:,} lines · target ", (target_label(result.target), "bold"),
        ),
        _inventory(result),
    ]
    grade_style = GRADE_STYLE.get(score.grade, "bold")
    headline = Text.assemble(
        ("TPU readiness ", "bold"),
        (f"{score.score:.1f}/100", grade_style),
        "  grade ",
        (score.grade, grade_style),
        f" ({score.grade_meaning})",
        f"\neffort {hours(score.effort)}",
        f" + {hours(score.supporting_effort)} tests, examples, benchmarks" if score.supporting_effort.high else "",
        f"   training {score.training:.1f} · inference {score.inference:.1f}",
    )
    blocks.append(Panel(headline, expand=False))
    why = why_line(result)
    if why:
        blocks.append(Text.assemble(("Why this score: ", "bold"), why))
    scope = result.gate_scope()
    if scope:
        blocks.append(Text.assemble(("Gate: ", "bold"), scope, " (the findings table lists the new ones)"))
    if result.findings:
        blocks.append(_category_table(result))
        blocks.append(_plan_table(result))
        blocks.append(_top_files(result))
        blocks.append(_findings(result.gated_findings() if scope else result.findings))
    else:
        blocks.append(Text("No findings: nothing in this tree ties it to CUDA.", style="green"))
    blocks.extend(_problems(result))
    blocks.append(_coverage_line(result))
    return blocks


def _inventory(result: ScanResult) -> Panel:
    inventory = result.inventory
    lines = Table.grid(padding=(0, 2))
    lines.add_column(style="bold")
    lines.add_column()
    kernels = inventory.ported_kernels
    if kernels:
        named = [k.name or f"{k.path}:{k.line}" for k in kernels]
        shown = ", ".join(named[:8]) + (f", … (+{len(named) - 8})" if len(named) > 8 else "")
        lines.add_row("Custom kernels", f"{len(kernels)}: {shown}")
    else:
        lines.add_row("Custom kernels", "none")
    if inventory.packages:
        names = sorted({p.name for p in inventory.packages})
        lines.add_row("CUDA-only packages", ", ".join(names))
    else:
        lines.add_row("CUDA-only packages", "none")
    if inventory.tpu_support:
        lines.add_row("TPU support already", ", ".join(f"{t.name} ({len(t.paths)} files)" for t in inventory.tpu_support))
    lines.add_row("Work by workload", f"training {inventory.training_findings} findings · inference {inventory.inference_findings} findings")
    return Panel(lines, title="Inventory", title_align="left", expand=False)


def _category_table(result: ScanResult) -> Table:
    table = Table(title="Findings by category", title_justify="left", show_edge=False)
    table.add_column("category")
    for severity in SEVERITIES:
        table.add_column(severity, justify="right", style=SEVERITY_STYLE[severity])
    table.add_column("total", justify="right", style="bold")
    for category, row in result.counts_by_category_and_severity().items():
        total = sum(row.values())
        if total:
            table.add_row(category, *(str(row[s] or "") for s in SEVERITIES), str(total))
    return table


def _plan_table(result: ScanResult) -> Table:
    table = Table(title="Migration plan, in phases (score reached once each step is done)", title_justify="left", show_edge=False)
    for name, justify in (("#", "right"), ("step", "left"), ("severity", "left"), ("score", "right"), ("effort h", "right"), ("fix", "left")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    number = 0
    for phase, items in plan_phases(result.score.plan):
        table.add_row("", Text(f"{PHASE_TITLES[phase]}: {phase_summary(items)}", style="bold"), "", "", "", "")
        for item in items[:MAX_STEPS_PER_PHASE]:
            number += 1
            table.add_row(
                str(number),
                f"{item.rule} {item.title}",
                Text(item.severity, style=SEVERITY_STYLE[item.severity]),
                f"{item.score_after:.1f} (+{item.score_gain:.1f})",
                f"{item.effort.low:.1f}-{item.effort.high:.1f}",
                shorten(first_sentence(item.fix), 70),
            )
        if len(items) > MAX_STEPS_PER_PHASE:
            table.add_row("", Text(f"… {len(items) - MAX_STEPS_PER_PHASE} more steps in this phase (JSON report)", style="dim"), "", "", "", "")
        number += max(0, len(items) - MAX_STEPS_PER_PHASE)
    return table


def _top_files(result: ScanResult) -> Table:
    table = Table(title="Top files", title_justify="left", show_edge=False)
    table.add_column("file", overflow="fold")
    table.add_column("role")
    for severity in SEVERITIES[:3]:
        table.add_column(severity, justify="right", style=SEVERITY_STYLE[severity])
    for path, role, counts in result.files_by_severity()[:MAX_ROWS]:
        table.add_row(line_safe_path(path), role, *(str(counts[s] or "") for s in SEVERITIES[:3]))
    return table


def _findings(findings: list[Finding]) -> Group:
    ordered = sorted(findings, key=lambda f: (severity_rank(f.severity), f.sort_key()))
    rows: list[RenderableType] = [Text("Findings", style="bold underline")]
    for finding in ordered[:MAX_FINDINGS]:
        where = f"{finding.path}:{finding.span.line}:{finding.span.column}"
        if finding.cell is not None:
            where = f"{finding.path}[cell {finding.cell}]:{finding.span.line}:{finding.span.column}"
        rows.append(
            Text.assemble(
                (f"{finding.severity:<8}", SEVERITY_STYLE[finding.severity]),
                (where, "bold"),
                " ",
                (f"{finding.rule} {finding.name}", "magenta"),
                f" {shorten(first_sentence(finding.message), 120)}",
                (" (optional path)" if finding.guarded else "", "dim"),
            )
        )
        rows.append(Text(f"         {_printable(finding.snippet)}", style="dim"))
    if len(ordered) > MAX_FINDINGS:
        rows.append(Text(f"… and {len(ordered) - MAX_FINDINGS} more: see --format json -o FILE", style="dim"))
    return Group(*rows)


def _printable(text: str) -> str:
    """Source text as the terminal may show it: a control character in a string literal
    (an escape sequence) is spelled as its Python escape instead of acting on the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _problems(result: ScanResult) -> list[object]:
    blocks: list[object] = []
    if result.errors:
        table = Table(title=f"Files that could not be analyzed ({len(result.errors)})", title_justify="left", show_edge=False)
        table.add_column("file", overflow="fold")
        table.add_column("kind")
        table.add_column("reason", overflow="fold")
        for error in result.errors[:20]:
            table.add_row(line_safe_path(error.path), error.kind, error.message)
        blocks.append(table)
    if result.skipped:
        blocks.append(Text(f"Skipped {len(result.skipped)} files: " + "; ".join(f"{s.path} ({s.reason})" for s in result.skipped[:5]) + (" …" if len(result.skipped) > 5 else ""), style="yellow"))
    return blocks


def _coverage_line(result: ScanResult) -> Text:
    c = result.coverage
    # Written as the identity every file satisfies, so a reader can check nothing was lost.
    return Text(
        f"Coverage: {c.files_found} files found = {c.files_analyzed} analyzed ({c.files_parsed} parsed, {c.files_screened} screened out by the prefilter)"
        f" + {c.files_errored} errors + {c.files_skipped} skipped; {len(result.suppressed)} findings suppressed",
        style="dim",
    )


