"""Offsets to 1-based line and column, for the analyzers that work on raw text."""

from __future__ import annotations

from bisect import bisect_right

from tpucheck.findings import Span


class LineIndex:
    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        at = find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = find("\n", at + 1)
        self._starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1

    def span(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column, end_line, end_column)
