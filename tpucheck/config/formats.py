"""The report formats there are, by name: a neutral list that configuration and the CLI
can check a `format` against without loading any report module."""

from __future__ import annotations

FORMAT_MODULES: dict[str, str] = {
    "terminal": "terminal",
    "json": "json_report",
    "markdown": "markdown",
    "html": "html",
    "sarif": "sarif",
    "github": "github",
    "concise": "concise",
}
"""Format name -> its module in tpucheck.report."""

FORMAT_NAMES: tuple[str, ...] = tuple(FORMAT_MODULES)
