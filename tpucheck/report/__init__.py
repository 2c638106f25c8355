"""Output formats. Each module formats a ScanResult and computes nothing of its own;
adding a format is one module plus one line in FORMATS.

Modules are imported when their format is used: the HTML report alone pulls in Jinja2
and Pygments, which every other scan would pay for at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from tpucheck.config.formats import FORMAT_MODULES
from tpucheck.report.options import ReportOptions

if TYPE_CHECKING:
    from tpucheck.result import ScanResult

__all__ = ["FORMATS", "ReportOptions", "Writer"]

Writer = Callable[["ScanResult", TextIO, ReportOptions], None]
"""(result, stream, options) -> None"""


def _writer(module: str) -> Writer:
    def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
        importlib.import_module(f"tpucheck.report.{module}").write(result, stream, options or ReportOptions())

    write.__qualname__ = f"{module}.write"
    return write


FORMATS: dict[str, Writer] = {name: _writer(module) for name, module in FORMAT_MODULES.items()}
