"""Output formats. Each module formats a ScanResult and computes nothing of its own;
adding a format is one module plus one line in FORMATS."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from tpucheck.reports import (
    concise,
    github,
    html,
    json_report,
    markdown,
    sarif,
    terminal,
)
from tpucheck.result import ScanResult

Writer = Callable[[ScanResult, TextIO, bool], None]
"""(result, stream, colour) -> None"""

FORMATS: dict[str, Writer] = {
    "terminal": terminal.write,
    "json": json_report.write,
    "markdown": markdown.write,
    "html": html.write,
    "sarif": sarif.write,
    "github": github.write,
    "concise": concise.write,
}
