"""HTML: one self-contained page to read, filter and share a scan.

The page must open offline and from an email attachment, so it loads nothing: CSS, SVG
and a little vanilla JS are inline. Everything that comes from scanned code, paths, rule
text or the scan root is escaped, because a repository under review is untrusted input:

* Jinja2 autoescapes every string in the template;
* snippets go through pygments, which escapes while it highlights, and are then marked
  safe — pygments' own markup;
* rule text goes through `prose`, which escapes everything and wraps its backtick spans
  in `<code>`; paths and names through `breakable_path`/`breakable_name`, which escape
  and add `<wbr>`: the only other markup we let through;
* the JSON the script reads is escaped for a `<script>` context (`</script>` cannot end
  the element), and help links are kept only when they are http(s), so a rule pack
  cannot smuggle a `javascript:` URL.

The findings table is rendered in full on the server, so the report works without JS;
the script only filters and sorts. No timestamps: two runs on the same tree produce the
same bytes, so reports can be diffed and cached.

The page opens with the verdict, where the work is (share of the plan's hours by
kernels, dependencies, mechanical edits and supporting code) and the plan; the inventory,
counts and findings follow. Sections adapt to what the scan found: no empty inventory
boxes, no count tables for a handful of findings, no one-row directory table (the
shallowest level that splits, else files), no severity column of zeros. The layout holds
from phone to desktop widths: the page never scrolls sideways, wide tables scroll in
their own box, code keeps a readable minimum width, and long paths and names wrap at `/`
and `_` rather than anywhere (tests/test_report_html_layout.py measures this in Chromium).

Like every report it only formats: the score, plan, inventory and counts come from the
ScanResult, the split of the work from `judgement.work_split`; the gauge geometry and
the grouping of kernels by file and of files by directory are presentation.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import PythonLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from tpucheck import __version__
from tpucheck.findings import CATEGORIES, SEVERITIES, Finding, severity_rank
from tpucheck.judge.score import PHASE_TITLES, folder_of
from tpucheck.report.judgement import (
    effort_apart,
    hours,
    percent,
    phase_summary,
    plan_phases,
    set_aside_text,
    target_label,
    why_line,
    work_sentence,
    work_split,
)
from tpucheck.report.options import ReportOptions
from tpucheck.result import KernelEntry, ScanResult

TEMPLATES = Path(__file__).parent / "templates"

GAUGE_RADIUS = 52.0
"""Radius of the score ring in SVG user units; the circumference sets the dash lengths."""

HIGHLIGHT_CLASS = "hl"
"""CSS scope of the pygments token styles, so they cannot restyle the rest of the page."""


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    """Write the page; colour options are ignored because the page carries its own styles."""
    stream.write(render(result))


def render(result: ScanResult) -> str:
    """The whole page as one string."""
    findings = sorted(result.findings, key=lambda f: (severity_rank(f.severity), f.sort_key()))
    links = _help_links(result.findings + result.suppressed)
    score = result.score
    circumference = 2 * math.pi * GAUGE_RADIUS
    page_data = {
        "severities": list(SEVERITIES),
        # The rule the `#selftest` hook types into the filter box: the first plan step,
        # i.e. the rule a reader is most likely to look for first.
        "selftestRule": score.plan[0].rule if score.plan else (findings[0].rule if findings else ""),
    }
    areas = work_split(result)
    context = {
        "version": __version__,
        "result": result,
        "score": score,
        "coverage": result.coverage,
        "set_aside_text": set_aside_text(result),
        "inventory": result.inventory,
        "severities": SEVERITIES,
        # Count tables show the severities that occur: a column of zeros says nothing.
        "present_severities": [s for s, n in result.counts_by_severity().items() if n],
        "categories": [c for c in _ordered_categories(result) if result.counts_by_category().get(c, 0)],
        "gauge": {
            "radius": GAUGE_RADIUS,
            "circumference": f"{circumference:.2f}",
            "filled": f"{circumference * max(0.0, min(score.score, 100.0)) / 100:.2f}",
        },
        "areas": areas,
        "work_sentence": work_sentence(areas),
        "kernel_files": kernels_by_file(result.inventory.ported_kernels),
        "cuda_folders": _folders(c.path for c in result.inventory.cuda_sources),
        "cuda_lines": sum(c.lines for c in result.inventory.cuda_sources),
        "category_severity": {c: row for c, row in result.counts_by_category_and_severity().items() if sum(row.values())},
        "heat": heat_view(result.files_by_severity()),
        "breakdown_min": BREAKDOWN_MIN_FINDINGS,
        "phases": [(PHASE_TITLES.get(phase, phase), phase_summary(items), items) for phase, items in plan_phases(score.plan)],
        "target": target_label(result.target),
        "effort": hours(score.effort),
        "supporting_effort": hours(score.supporting_effort),
        "effort_apart": " + ".join(effort_apart(score)),
        "performance_effort": hours(score.performance_effort),
        "why": why_line(result),
        "findings": [_row(f, links) for f in findings],
        "suppressed": [_row(f, links) for f in result.suppressed],
        "links": links,
        "page_data": script_json(page_data),
        "highlight_css": Markup(HtmlFormatter().get_style_defs(f".{HIGHLIGHT_CLASS}")),
    }
    return _environment().get_template("report.html.j2").render(context)


@lru_cache(maxsize=1)
def _environment() -> Environment:
    """One environment per process: templates are parsed once. Autoescape is on for every
    name (`default=True`), so renaming the template cannot silently turn escaping off."""
    environment = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["prose"] = prose
    environment.filters["path"] = breakable_path
    environment.filters["name"] = breakable_name
    environment.filters["percent"] = percent
    return environment


# --- presentation helpers -------------------------------------------------------------


BREAKDOWN_MIN_FINDINGS = 10
"""Below this many findings the findings table says it all: no count tables above it."""
HEAT_ROWS = 15
"""Rows of the directory or file table; the rest are counted in a line under it."""
HEAT_MAX_DEPTH = 3


@dataclass(frozen=True, slots=True)
class DirectoryHeat:
    directory: str
    files: int
    counts: dict[str, int]
    total: int


def directory_heat(files: list[tuple[str, str, dict[str, int]]], depth: int = 1) -> list[DirectoryHeat]:
    """Group `ScanResult.files_by_severity()` by the first `depth` directories of each path:
    where the work sits at a glance. Files at the root are grouped under ".". Directories
    are ranked the way files are (most severe, then most findings, then name) so the heat
    view reads top-down."""
    grouped: dict[str, tuple[int, dict[str, int]]] = {}
    for path, _role, counts in files:
        top = "/".join(path.replace("\\", "/").split("/")[:-1][:depth]) or "."
        seen, totals = grouped.get(top, (0, dict.fromkeys(SEVERITIES, 0)))
        grouped[top] = (seen + 1, {s: totals[s] + counts.get(s, 0) for s in SEVERITIES})

    def rank(item: tuple[str, tuple[int, dict[str, int]]]) -> tuple[int, int, str]:
        name, (_, counts) = item
        worst = next((i for i, s in enumerate(SEVERITIES) if counts[s]), len(SEVERITIES))
        return (worst, -sum(counts.values()), name)

    return [DirectoryHeat(name, seen, counts, sum(counts.values())) for name, (seen, counts) in sorted(grouped.items(), key=rank)]


@dataclass(frozen=True, slots=True)
class HeatView:
    """The per-place table: by directory when the findings sit in two or more, else by
    file when there are two or more files, else nothing (one row says nothing the
    findings table does not)."""

    kind: str
    """"directory" or "file"."""
    rows: list[DirectoryHeat]
    more: int
    """Rows left out after HEAT_ROWS."""


def heat_view(files: list[tuple[str, str, dict[str, int]]]) -> HeatView | None:
    """The shallowest directory level that splits the findings in two or more places;
    files when no level up to HEAT_MAX_DEPTH does."""
    for depth in range(1, HEAT_MAX_DEPTH + 1):
        rows = directory_heat(files, depth)
        if len(rows) >= 2:
            return HeatView("directory", rows[:HEAT_ROWS], max(0, len(rows) - HEAT_ROWS))
    if len(files) >= 2:
        rows = [DirectoryHeat(path, 1, counts, sum(counts.values())) for path, _role, counts in files]
        return HeatView("file", rows[:HEAT_ROWS], max(0, len(rows) - HEAT_ROWS))
    return None


def kernels_by_file(kernels: Iterable[KernelEntry]) -> list[tuple[str, list[KernelEntry]]]:
    """The kernel inventory folded by file: 61 kernels read as 25 files, each with its
    kernels in line order, files in path order so a folder's files stay together."""
    grouped: dict[str, list[KernelEntry]] = {}
    for kernel in kernels:
        grouped.setdefault(kernel.path, []).append(kernel)
    return [(path, sorted(grouped[path], key=lambda k: k.line)) for path in sorted(grouped)]


def _folders(paths: Iterable[str]) -> list[str]:
    return sorted({folder_of(p) or "." for p in paths})


def _ordered_categories(result: ScanResult) -> list[str]:
    """The fixed CATEGORIES order, then any category a rule pack added."""
    return list(CATEGORIES) + [c for c in result.counts_by_category() if c not in CATEGORIES]


@dataclass(frozen=True, slots=True)
class Row:
    """One finding as the table shows it: the finding plus its markup-ready pieces."""

    finding: Finding
    location: str
    location_key: str
    """Sort key for the location column: path, then zero-padded line and column."""
    snippet: Markup
    help: str | None


def _row(finding: Finding, links: dict[str, str]) -> Row:
    span = finding.span
    location = f"{finding.path}:{span.line}:{span.column}" + (f" [cell {finding.cell}]" if finding.cell is not None else "")
    key = f"{finding.path}:{finding.cell or 0:06d}:{span.line:08d}:{span.column:06d}"
    return Row(finding, location, key, highlight_snippet(finding.snippet, finding.path), links.get(finding.rule))


def highlight_snippet(snippet: str, path: str) -> Markup:
    """The snippet as highlighted, escaped HTML. Pygments escapes `<`, `>`, `&` and quotes
    itself, which is what makes marking its output safe correct."""
    if not snippet:
        return Markup("")
    return Markup(highlight(snippet, _lexer_for(path), HtmlFormatter(nowrap=True)).rstrip("\n"))


@lru_cache(maxsize=64)
def _lexer_for(path: str) -> Lexer:
    """Lexer by file extension; Python for notebooks and anything pygments does not know."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".ipynb"):
        return PythonLexer(stripnl=False)
    try:
        return get_lexer_for_filename(name, stripnl=False)
    except ClassNotFound:
        return PythonLexer(stripnl=False)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def prose(text: str) -> Markup:
    """Rule text (messages, fixes) as HTML: its `inline code` spans become `<code>`, and
    everything, inside spans and out, is escaped. A lone backtick stays a backtick."""
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(escape(text[last : span.start()]))
        out.append(f"<code>{_breakable_code(span.group(1))}</code>")
        last = span.end()
    out.append(escape(text[last:]))
    return Markup("".join(out))


_CODE_BREAK = re.compile(r"(?<=\w[./,])(?=\w)")
"""After a dot, slash or comma followed by a name: where a long call wraps readably."""


def _breakable_code(code: str) -> str:
    return str(Markup("<wbr>").join(escape(piece) for piece in _CODE_BREAK.split(code)))


_NAME_BREAK = re.compile(r"(?<=[a-zA-Z0-9]_)(?=[a-zA-Z0-9])")


def breakable_name(name: str) -> Markup:
    """An identifier, escaped, that may wrap after an inner underscore: a 60-character
    kernel name fits a narrow column as `_chunk_scan_bwd_` / `ddAcs_kernel`."""
    return Markup("<wbr>").join(escape(piece) for piece in _NAME_BREAK.split(name))


def breakable_path(path: str, names: bool = False) -> Markup:
    """The path, escaped, with a break opportunity after each `/`: a long path wraps at a
    folder instead of widening its column or breaking mid-name. With `names`, also after
    inner underscores, for a cell that must stay narrow (a finding's location)."""
    return Markup("/<wbr>").join(breakable_name(part) if names else escape(part) for part in path.split("/"))


def _help_links(findings: list[Finding]) -> dict[str, str]:
    """Rule id → help page, from the findings (plan items do not carry it). Only http(s)
    links are kept: a rule pack's `help_uri` must not become a `javascript:` link."""
    links: dict[str, str] = {}
    for finding in findings:
        uri = finding.help_uri
        if uri and finding.rule not in links and uri.lower().startswith(("https://", "http://")):
            links[finding.rule] = uri
    return links


def script_json(data: object) -> Markup:
    """JSON safe inside `<script type="application/json">`: `<`, `>` and `&` become unicode
    escapes, so no string can close the element or open a comment; JSON.parse restores them."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)
