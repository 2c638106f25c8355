"""What a module's top-level imports bind, and the lines where a name can be used, read
line by line as `imports.py` reads: the one text-level reading that `registry.py` (names
only unnamed components use) and `option_imports.py` (names used only behind an option)
share, so that both agree on what an import binds and on what counts as a use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["DEFINITION", "IMPORT_LINE", "code_lines", "definition_end", "statement_lines", "top_level_bindings", "use_lines"]

_IMPORT = re.compile(r"^import[ \t]+([^#]+?)[ \t]*(?:#.*)?$")
_FROM = re.compile(r"^from[ \t]+([\w.]+)[ \t]+import[ \t]+(.*)$")
IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b")
"""The first line of an import statement."""
DEFINITION = re.compile(r"^(?:async[ \t]+)?(?:class|def)[ \t]+([A-Za-z_]\w*)")
"""The header of a top-level `def` or `class`, its name the group."""
_ALL = re.compile(r"^[ \t]*__all__[ \t]*(?:\+?=|:)")
_STRING = re.compile(r"""(?:[rbfuRBFU]{0,2})(?:"[^"\n]*"|'[^'\n]*')""")
"""A one-line string literal: its words name nothing (`help="use the vllm library"`)."""


def top_level_bindings(text: str) -> dict[str, tuple[str, bool]]:
    """Bound name -> (what it binds: `module` or `module.name`, whether a `from` import
    binds it), for the imports at column 0 (a parenthesised `from` import to its close)."""
    lines = text.splitlines()
    out: dict[str, tuple[str, bool]] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if (found := _FROM.match(line)) is not None:
            names = found.group(2)
            if names.lstrip().startswith("("):
                while ")" not in names and index < len(lines):
                    names += " " + lines[index]
                    index += 1
            for piece in names.split("#")[0].strip("() \\").split(","):
                target, _, alias = piece.partition(" as ")
                target, alias = target.strip(" ()\\"), alias.strip(" ()\\")
                if target and target != "*":
                    out[alias or target] = (f"{found.group(1)}.{target}", True)
        elif (found := _IMPORT.match(line)) is not None:
            for piece in found.group(1).split(","):
                target, _, alias = piece.partition(" as ")
                target, alias = target.strip(), alias.strip()
                if target:
                    top = target.split(".")[0]
                    out[alias or top] = (target if alias else top, False)
    return out


def statement_lines(text: str, python: bool = True) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, whether its words name nothing): in Python, import statements
    (parenthesised ones to their close) and `__all__` lists (to their close)."""
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not python:
            yield number, line, False
            continue
        if depth > 0:
            depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
            yield number, line, True
            continue
        if IMPORT_LINE.match(line) or _ALL.match(line):
            depth = max(line.count("(") + line.count("[") - line.count(")") - line.count("]"), 0)
            yield number, line, True
            continue
        yield number, line, False


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every line where a name can be used: outside import
    statements and `__all__`, one-line string literals blanked, comments cut."""
    return [(number, _STRING.sub('""', line).split("#", 1)[0]) for number, line, skip in statement_lines(text) if not skip]


def use_lines(lines: Iterable[tuple[int, str]], name: str) -> list[int]:
    """The numbers of the `code_lines` that use `name` as a whole word (not `x.name`)."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    return [number for number, code in lines if word.search(code)]


def definition_end(lines: list[str], header: int) -> int:
    """The index of the last non-blank line of a top-level definition whose header is at
    `header`: up to the next statement at column 0 (comments and closing brackets there
    belong to it)."""
    end = header
    for after in range(header + 1, len(lines)):
        line = lines[after]
        if line and not line[0].isspace() and not line.startswith(("#", ")", "]", "}")):
            break
        if line.strip():
            end = after
    return end
