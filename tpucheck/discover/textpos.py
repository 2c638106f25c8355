"""Text positions: offsets to lines and columns, where TOML keys and values were written,
and which line a TOML syntax error points at.

Config, manifests and the raw-text analyzers all report 1-based lines and 1-based
columns counting characters, with an exclusive end. They used to count on their own
(three line indexes, two TOML locators, two readings of tomllib's error messages) and
could drift apart; this module is the one place that counts.

`tomllib` gives no positions at all, so `TomlLocator` recovers them from the text. It
has two views of one document: a statement scan (`line_of`, `item_line`), which config
problems use to name the line of a key, and a search inside a table's region
(`anchor`, `find_string`, `find_key_line`), which manifests use to pin each dependency
string to its characters, handing out each occurrence once.
"""

from __future__ import annotations

import json
import re
import sys
from bisect import bisect_right
from dataclasses import dataclass

from tpucheck.findings import Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PYTHON_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
"""What `ast` counts as a line break; also TOML's (which forbids a lone \\r) and INI's."""
YAML_LINE_BREAKS = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
"""PyYAML's wider set, so that its marks map back to the same place."""
NEWLINES_ONLY = re.compile(r"\n")
"""For native sources, where compilers count lines by \\n."""


class LineIndex:
    """Offsets <-> (line, column) for one text, under one set of line breaks."""

    def __init__(self, text: str, breaks: re.Pattern[str] = PYTHON_LINE_BREAKS) -> None:
        self.text = text
        self.breaks = breaks
        self.starts = [0] + [m.end() for m in breaks.finditer(text)]

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def line(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def span(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column, end_line, end_column)

    def line_text(self, line: int) -> str:
        """Line `line` (1-based) without its line break."""
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        content = self.text[start:end]
        found = self.breaks.search(content)
        return content[: found.start()] if found else content

    def lines(self) -> list[str]:
        return [self.line_text(n) for n in range(1, len(self.starts) + 1)]

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column - 1

    def line_span(self, line: int) -> tuple[int, int]:
        """The stripped content of a line as an offset range: the fallback position when
        an entry cannot be pinned down more precisely."""
        content = self.line_text(line)
        start = self.starts[line - 1]
        stripped = content.strip()
        if not stripped:
            return start, start
        lead = len(content) - len(content.lstrip())
        return start + lead, start + lead + len(stripped)


# --------------------------------------------------------------------------- TOML syntax errors


@dataclass(frozen=True)
class TomlSyntaxError:
    """What tomllib said, split into a one-line message and the position it named."""

    detail: str
    """The message without its "(at ...)" suffix, on one line."""
    line: int | None
    column: int | None = None
    at_end: bool = False
    """The error is "at end of document" (an unterminated value): `line` is the last
    line with content, where the user has to look."""


_AT_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_AT_END = "(at end of document)"


def toml_syntax_error(exc: BaseException, text: str) -> TomlSyntaxError:
    """Reads tomllib's `(at line L, column C)` / `(at end of document)` suffix."""
    if isinstance(exc, RecursionError):
        return TomlSyntaxError("nested too deeply", None)
    message = " ".join(str(exc).split())
    position = _AT_POSITION.search(message)
    if position:
        return TomlSyntaxError(message[: position.start()], int(position.group(1)), int(position.group(2)))
    if message.endswith(_AT_END):
        return TomlSyntaxError(message.removesuffix(_AT_END).rstrip(), text.rstrip().count("\n") + 1, at_end=True)
    return TomlSyntaxError(message, getattr(exc, "lineno", None))


# --------------------------------------------------------------------------- TOML keys

_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL = r"'[^'\n]*'"
_KEY_PART = re.compile(rf"{_BARE}|{_BASIC}|{_LITERAL}")
_DOTTED = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})(?:[ \t]*\.[ \t]*(?:{_BARE}|{_BASIC}|{_LITERAL}))*"
_HEADER = re.compile(rf"\[\[?[ \t]*({_DOTTED})[ \t]*\]\]?")
_KEY_VALUE = re.compile(rf"({_DOTTED})[ \t]*=")
_SKIP = re.compile(
    r'"""(?:\\.|[^\\])*?"""(?:""?)?'  # multi-line basic string (up to two quotes may end it)
    r"|'''[\s\S]*?'''(?:''?)?"  # multi-line literal string
    rf"|{_BASIC}|{_LITERAL}"
    r"|#[^\n]*"  # comment
)
_HEADER_LINE = re.compile(
    rf"^[ \t]*(\[\[?)[ \t]*({_DOTTED})[ \t]*\]\]?[ \t]*(?:#[^\r\n]*)?\r?$",
    re.MULTILINE,
)


def key_path(dotted: str) -> tuple[str, ...]:
    """`tool."tpucheck".x` -> ("tool", "tpucheck", "x")."""
    return tuple(_unquote(part) for part in _KEY_PART.findall(dotted))


def _unquote(part: str) -> str:
    if part[:1] == "'":
        return part[1:-1]
    if part[:1] == '"':
        try:
            return str(tomllib.loads(f"k = {part}")["k"])
        except ValueError:
            return part[1:-1]
    return part


def _key_alternatives(key: str) -> str:
    escaped = re.escape(key)
    return rf"(?:{escaped}|\"{escaped}\"|'{escaped}')"


def strip_toml_comment(line: str) -> str:
    quote: str | None = None
    escaped = False
    for index, char in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:index]
    return line


@dataclass(slots=True)
class Anchor:
    start: int
    """Where to start searching for the entries."""
    end: int
    """Where the table ends (the next header): entries are never searched past it."""
    fallback: int
    """Offset of the line used when an entry is not found (key line or header line)."""


class TomlLocator:
    """Where a TOML document's keys and values were written. Only run on text tomllib
    accepted, so it can stay simple."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = LineIndex(text)
        self.used: set[int] = set()
        """Offsets already handed out by the search view."""
        self._spots: dict[tuple[str, ...], tuple[int, int]] | None = None
        self._headers: list[tuple[int, tuple[str, ...]]] | None = None

    # ----------------------------------------------------------------- statement view

    @property
    def spots(self) -> dict[tuple[str, ...], tuple[int, int]]:
        """path -> (start of the key or header, end of its value)."""
        if self._spots is None:
            self._spots = self._scan()
        return self._spots

    def _scan(self) -> dict[tuple[str, ...], tuple[int, int]]:
        """Skips strings and comments, tracks brackets so that a value spanning lines is
        one statement, and records each `[header]` and `key =` starting one."""
        spots: dict[tuple[str, ...], tuple[int, int]] = {}
        text, pos, depth = self.text, 0, 0
        table: tuple[str, ...] = ()
        statement, open_key = True, None
        while pos < len(text):
            char = text[pos]
            if char == "\n" and depth == 0:
                if open_key is not None:
                    spots[open_key] = (spots[open_key][0], pos)
                statement, open_key = True, None
            if char in " \t\r\n":
                pos += 1
                continue
            if statement and depth == 0:
                statement = False
                found = (_HEADER if char == "[" else _KEY_VALUE).match(text, pos)
                if found:
                    path = key_path(found.group(1))
                    for size in range(1, len(path)):  # `[a.b]` and `a.b = 1` write `a` too
                        spots.setdefault((() if char == "[" else table) + path[:size], (pos, found.end()))
                    if char == "[":
                        table = path
                        spots.setdefault(path, (pos, found.end()))
                    elif table + path not in spots:
                        open_key = table + path
                        spots[open_key] = (pos, len(text))
                    pos = found.end()
                    continue
            skipped = _SKIP.match(text, pos) if char in "\"'#" else None
            if skipped:
                pos = skipped.end()
                continue
            depth += (char in "[{") - (char in "]}")
            pos += 1
        if open_key is not None:
            spots[open_key] = (spots[open_key][0], len(text))
        return spots

    def line_of(self, path: tuple[str, ...]) -> int | None:
        """The line of `path`, or of its nearest written parent (an inline table's keys
        are not recorded: their table's line is close enough)."""
        for size in range(len(path), 0, -1):
            spot = self.spots.get(path[:size])
            if spot is not None:
                return self.index.line(spot[0])
        return None

    def item_line(self, path: tuple[str, ...], item: str) -> int | None:
        """The line of a string inside the value of `path` (an array may span lines)."""
        spot = self.spots.get(path)
        if spot is None:
            return self.line_of(path)
        hits = [at for quoted in (json.dumps(item, ensure_ascii=False), f"'{item}'") if (at := self.text.find(quoted, *spot)) >= 0]
        return self.index.line(min(hits) if hits else spot[0])

    # ----------------------------------------------------------------- search view

    @property
    def headers(self) -> list[tuple[int, tuple[str, ...]]]:
        """(offset of the header line, table path) of every line that is a header."""
        if self._headers is None:
            self._headers = [(m.start(), key_path(m.group(2))) for m in _HEADER_LINE.finditer(self.text)]
        return self._headers

    def _region_end(self, start: int) -> int:
        for offset, _ in self.headers:
            if offset > start:
                return offset
        return len(self.text)

    def anchor(self, table: tuple[str, ...], keys: tuple[str, ...] = (), occurrence: int = 0) -> Anchor:
        """Position just after `table` + `keys`, however the file spelled them: a
        `[table]` header, a parent header with dotted keys, or an inline table.
        `occurrence` picks one of an array of tables."""
        start, rest, found_header = 0, table + keys, False
        for size in range(len(table), 0, -1):
            matching = [offset for offset, path in self.headers if path == table[:size]]
            if matching:
                pick = occurrence if size == len(table) else 0
                start = matching[min(pick, len(matching) - 1)]
                rest = table[size:] + keys
                found_header = True
                break
        if found_header:
            end = self._region_end(start)
        else:  # root-level (dotted) keys must come before the first header
            end = self.headers[0][0] if self.headers else len(self.text)
        cursor, fallback = start, start
        for key in rest:
            pattern = re.compile(rf"(?:^|(?<=[\s{{,.]))({_key_alternatives(key)})[ \t]*[=.]", re.MULTILINE)
            found = pattern.search(self.text, cursor, end)
            if found:
                fallback = found.start(1)
                cursor = found.end()
        return Anchor(cursor, end, fallback)

    def find_string(self, value: str, start: int, end: int) -> tuple[int, int] | None:
        """Content range of the first unused quoted occurrence of `value`."""
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        forms = [escaped]
        if "'" not in value and "\n" not in value:
            forms.append(value)
        quotes = ['"', "'"]
        best: tuple[int, int] | None = None
        for form, quote in zip(forms, quotes):
            needle = quote + form + quote
            at = self.text.find(needle, start, end)
            while at >= 0 and at + 1 in self.used:
                at = self.text.find(needle, at + 1, end)
            if at >= 0 and (best is None or at + 1 < best[0]):
                best = (at + 1, at + 1 + len(form))
        if best is not None:
            self.used.add(best[0])
        return best

    def find_key_line(self, key: str, start: int, end: int) -> tuple[int, int] | None:
        """Range of a `key = value` line (comment excluded), for poetry-style tables
        whose entries are keys; just the key when it sits inside an inline table."""
        alternatives = _key_alternatives(key)
        at_line_start = re.compile(rf"^[ \t]*({alternatives})[ \t]*=", re.MULTILINE)
        anywhere = re.compile(rf"(?:^|(?<=[\s{{,]))({alternatives})[ \t]*=", re.MULTILINE)
        for pattern, whole_line in ((at_line_start, True), (anywhere, False)):
            pos = start
            while True:
                found = pattern.search(self.text, pos, end)
                if not found:
                    break
                key_start = found.start(1)
                if key_start in self.used:
                    pos = found.end()
                    continue
                self.used.add(key_start)
                if not whole_line:
                    return key_start, found.end(1)
                line = self.index.line(key_start)
                line_end = self.index.starts[line - 1] + len(self.index.line_text(line))
                rest = strip_toml_comment(self.text[key_start:line_end]).rstrip()
                return key_start, key_start + len(rest)
        return None

    def fallback_span(self, offset: int) -> tuple[int, int]:
        return self.index.line_span(self.index.line(offset))
