"""Output formats. Each module formats a ScanResult and computes nothing of its own;
adding a format is one module plus one line in FORMATS.

Modules are imported when their format is used: the HTML report alone pulls in Jinja2
and Pygments, which every other scan would pay for at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TextIO

from tpucheck.result import ScanResult

Writer = Callable[[ScanResult, TextIO, bool], None]
"""(result, stream, colour) -> None"""


def _writer(module: str) -> Writer:
    def write(result: ScanResult, stream: TextIO, colour: bool = False) -> None:
        importlib.import_module(f"tpucheck.reports.{module}").write(result, stream, colour)

    write.__qualname__ = f"{module}.write"
    return write


FORMATS: dict[str, Writer] = {
    "terminal": _writer("terminal"),
    "json": _writer("json_report"),
    "markdown": _writer("markdown"),
    "html": _writer("html"),
    "sarif": _writer("sarif"),
    "github": _writer("github"),
    "concise": _writer("concise"),
}
