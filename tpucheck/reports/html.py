"""HTML: one self-contained page to read, filter and share a scan.

The page must open offline and from an email attachment, so it loads nothing: CSS, SVG
and a little vanilla JS are inline. Everything that comes from scanned code, paths, rule
text or the scan root is escaped, because a repository under review is untrusted input:

* Jinja2 autoescapes every string in the template;
* snippets go through pygments, which escapes while it highlights, and are then marked
  safe — the only markup we let through, and it is pygments' own;
* the JSON the script reads is escaped for a `<script>` context (`</script>` cannot end
  the element), and help links are kept only when they are http(s), so a rule pack
  cannot smuggle a `javascript:` URL.

The findings table is rendered in full on the server, so the report works without JS;
the script only filters and sorts. No timestamps: two runs on the same tree produce the
same bytes, so reports can be diffed and cached.

Like every report it only formats: the score, plan, inventory and counts come from the
ScanResult; the geometry of the gauge and bars and the per-directory grouping are
presentation.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import PythonLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from tpucheck import __version__
from tpucheck.findings import CATEGORIES, SEVERITIES, Finding, severity_rank
from tpucheck.reports.judgement import hours, target_label, why_line
from tpucheck.reports.options import ReportOptions
from tpucheck.result import ScanResult
from tpucheck.scoring import PHASE_TITLES

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
    context = {
        "version": __version__,
        "result": result,
        "score": score,
        "coverage": result.coverage,
        "inventory": result.inventory,
        "severities": SEVERITIES,
        "categories": [c for c in _ordered_categories(result) if result.counts_by_category().get(c, 0)],
        "gauge": {
            "radius": GAUGE_RADIUS,
            "circumference": f"{circumference:.2f}",
            "filled": f"{circumference * max(0.0, min(score.score, 100.0)) / 100:.2f}",
        },
        "category_bars": _bars(result.counts_by_category()),
        "severity_bars": _bars(result.counts_by_severity()),
        "category_severity": result.counts_by_category_and_severity(),
        "directories": directory_heat(result.files_by_severity()),
        "plan": score.plan,
        "phase_titles": PHASE_TITLES,
        "target": target_label(result.target),
        "effort": hours(score.effort),
        "supporting_effort": hours(score.supporting_effort),
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
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


# --- presentation helpers -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    count: int
    percent: float
    """Bar length relative to the longest bar, 0-100."""


def _bars(counts: dict[str, int]) -> list[Bar]:
    """Non-zero counts as bars scaled to the largest, in the dict's (fixed) order."""
    top = max(counts.values(), default=0)
    return [Bar(label, count, round(100.0 * count / top, 1)) for label, count in counts.items() if count and top]


@dataclass(frozen=True, slots=True)
class DirectoryHeat:
    directory: str
    files: int
    counts: dict[str, int]
    total: int


def directory_heat(files: list[tuple[str, str, dict[str, int]]]) -> list[DirectoryHeat]:
    """Group `ScanResult.files_by_severity()` by top-level directory: where the work sits at
    a glance. Files at the root are grouped under ".". Directories are ranked the way files
    are (most severe, then most findings, then name) so the heat view reads top-down."""
    grouped: dict[str, tuple[int, dict[str, int]]] = {}
    for path, _role, counts in files:
        top = path.replace("\\", "/").split("/", 1)[0] if "/" in path.replace("\\", "/") else "."
        seen, totals = grouped.get(top, (0, dict.fromkeys(SEVERITIES, 0)))
        grouped[top] = (seen + 1, {s: totals[s] + counts.get(s, 0) for s in SEVERITIES})

    def rank(item: tuple[str, tuple[int, dict[str, int]]]) -> tuple[int, int, str]:
        name, (_, counts) = item
        worst = next((i for i, s in enumerate(SEVERITIES) if counts[s]), len(SEVERITIES))
        return (worst, -sum(counts.values()), name)

    return [DirectoryHeat(name, seen, counts, sum(counts.values())) for name, (seen, counts) in sorted(grouped.items(), key=rank)]


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
