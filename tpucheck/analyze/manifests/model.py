"""What every manifest parser yields: `Requirement`s with exact positions, or a
`ManifestError`; and the two habits they share (pip's comment rule, offsets to spans)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tpucheck.discover.textpos import LineIndex


@dataclass(frozen=True, slots=True)
class Requirement:
    """One dependency (or package index) a manifest asks for, and where it says so."""

    kind: str
    """"package", or "index" for an index / find-links URL."""
    name: str
    """PEP 503-normalized, so rules can match one spelling; "" for an index."""
    spec: str
    """What follows the name as written (extras, versions, `@ URL`, markers); for an
    index, or a requirement given only as a URL/path, the URL/path itself. Kept verbatim
    because the CUDA signal often lives here (`+cu121`, `/whl/cu121`)."""
    raw: str
    """The entry as written, stripped: what a report shows as the snippet."""
    ecosystem: str
    """"pip" or "conda": the same name can mean different packages in each."""
    line: int
    column: int
    end_line: int
    end_column: int
    extra: str | None = None
    """The optional extra (or optional group) that asks for it; None for a base dependency.
    An extra is installed only on request (`pip install pkg[cuda]`), so the CUDA-only
    package in it is a choice the project offers, not a requirement of the product."""


class ManifestError(Exception):
    """A manifest that its own format's parser rejects; the scan reports it and goes on."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def make_requirement(
    t: LineIndex, parsed: tuple[str, str, str], raw: str, ecosystem: str, start: int, end: int, extra: str | None = None
) -> Requirement:
    kind, name, spec = parsed
    line, column = t.position(start)
    end_line, end_column = t.position(end)
    return Requirement(kind, name, spec, raw.strip(), ecosystem, line, column, end_line, end_column, extra)


_COMMENT_RE = re.compile(r"(?:^|\s)#")


def strip_comment(line: str) -> str:
    """pip's comment rule: `#` at the start or after whitespace, so `#egg=` survives."""
    found = _COMMENT_RE.search(line)
    return line[: found.start()] if found else line
