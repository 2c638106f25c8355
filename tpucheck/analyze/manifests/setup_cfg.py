"""setup.cfg: `[options]` requirement keys and `[options.extras_require]`, read line by
line because `configparser` forgets line numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tpucheck.analyze.manifests.model import Requirement, make_requirement, strip_comment
from tpucheck.analyze.manifests.pip import parse_pip_line
from tpucheck.discover.textpos import LineIndex

_CFG_REQUIREMENT_KEYS = {"install_requires", "setup_requires", "tests_require"}
_MARKER_START_RE = re.compile(
    r"(?:python_version|python_full_version|os_name|sys_platform|platform_release|platform_system"
    r"|platform_version|platform_machine|platform_python_implementation|implementation_name"
    r"|implementation_version|extra)\b|[(\"']"
)


@dataclass(slots=True)
class _CfgPiece:
    line: int
    start: int
    """0-based character index in the line."""
    text: str


def parse_setup_cfg(text: str) -> list[Requirement]:
    """A minimal INI reader, because `configparser` forgets line numbers.

    Mirrors setuptools: a multi-line value holds one requirement per line; a value
    written on the key line alone is split at ';' (setuptools does that too), except
    that a ';' starting an environment marker is kept with its requirement.
    """
    t = LineIndex(text)
    found: list[Requirement] = []
    section: str | None = None
    collecting = False
    key_indent = -1
    pieces: list[_CfgPiece] = []
    extra: str | None = None

    def flush() -> None:
        entries: list[_CfgPiece] = []
        if len(pieces) == 1:
            entries = _split_semicolons(pieces[0])
        else:
            entries = pieces
        for piece in entries:
            entry = strip_comment(piece.text)
            stripped = entry.strip()
            if not stripped or stripped.startswith("#"):
                continue
            parsed = parse_pip_line(stripped, allow_options=False)
            if parsed is None:
                continue
            lead = len(entry) - len(entry.lstrip())
            start = t.starts[piece.line - 1] + piece.start + lead
            found.append(make_requirement(t, parsed, stripped, "pip", start, start + len(stripped), extra=extra))
        pieces.clear()

    for number, content in enumerate(t.lines(), start=1):
        stripped = content.strip()
        if not stripped or stripped[0] in "#;":
            continue  # configparser lets blank and comment lines sit inside a value
        indent = len(content) - len(content.lstrip())
        if key_indent >= 0 and indent > key_indent:
            if collecting:
                pieces.append(_CfgPiece(number, indent, content[indent:].rstrip()))
            continue
        if collecting:
            flush()
        collecting, key_indent = False, -1
        header = re.fullmatch(r"\[(.+)\]", stripped)
        if header:
            section = header.group(1).strip()
            continue
        delimiter = re.search(r"[=:]", content)
        if not delimiter:
            continue
        key = content[: delimiter.start()].strip().lower().replace("-", "_")
        key_indent = indent
        collecting = (section == "options" and key in _CFG_REQUIREMENT_KEYS) or section == "options.extras_require"
        extra = content[: delimiter.start()].strip() if section == "options.extras_require" else None
        value = content[delimiter.end() :]
        if collecting and value.strip():
            if value.strip().startswith("file:"):
                collecting = False  # the referenced file is a manifest scanned on its own
            else:
                lead = len(value) - len(value.lstrip())
                pieces.append(_CfgPiece(number, delimiter.end() + lead, value.strip()))
    if collecting:
        flush()
    return found


def _split_semicolons(piece: _CfgPiece) -> list[_CfgPiece]:
    parts: list[_CfgPiece] = []
    position = 0
    for chunk in piece.text.split(";"):
        if parts and _MARKER_START_RE.match(chunk.strip()):
            previous = parts[-1]
            parts[-1] = _CfgPiece(previous.line, previous.start, previous.text + ";" + chunk)
        else:
            parts.append(_CfgPiece(piece.line, piece.start + position, chunk))
        position += len(chunk) + 1
    return parts
