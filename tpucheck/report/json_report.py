"""The whole ScanResult as JSON: versioned, ordered, byte-identical for the same tree."""

from __future__ import annotations

import json
from typing import TextIO

from tpucheck.report.options import ReportOptions
from tpucheck.result import ScanResult


def render(result: ScanResult) -> str:
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    stream.write(render(result))
