"""Read Jupyter notebooks and present their code cells as one virtual Python module.

A notebook is one program split into cells: `import torch` in cell 1 gives meaning to
`torch.cuda` in cell 5. Analyzing each cell on its own would lose that, so the code cells
are concatenated into a single module, analyzed by the ordinary Python analyzer, and
every position is mapped back to (cell number, line in cell) for reporting.

IPython syntax (`%magic`, `!shell`, `obj?`, `%%bash` cells) is not Python, so those
lines are replaced by `pass` at the same indentation. Replacing instead of deleting
keeps line numbers aligned with the notebook, and `pass` is valid wherever a statement
may stand, including as the only statement of a block. Columns of unmasked lines are
untouched, so only lines need mapping.

Nothing here executes notebook content: the file is read with `json.loads` only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from tpucheck.jsontypes import json_type

__all__ = [
    "Cell",
    "NotebookError",
    "VirtualModule",
    "build_virtual_module",
    "magic_shell_commands",
    "read_cells",
]


class NotebookError(Exception):
    """The file cannot be read as a notebook; the message is one line meant for the user."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One notebook cell, numbered as the user sees it in the notebook."""

    number: int
    """1-based, counting every cell (markdown and raw too), so it matches what users count."""
    kind: str
    """`cell_type` as written ("code", "markdown", "raw", "heading", ...)."""
    source: str


# --------------------------------------------------------------------------- reading


def read_cells(text: str) -> list[Cell]:
    """Parse notebook JSON (nbformat 4, or nbformat 3 with worksheets) into cells.

    Validation is limited to what this module relies on, so that notebooks written by
    odd tools still load, while anything that would make the mapping wrong is an error
    rather than a silent guess.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise NotebookError("not valid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer longer than int() accepts (4300 digits)
        raise NotebookError(f"not valid JSON: {str(exc).splitlines()[0] if str(exc) else 'bad value'}") from None
    if not isinstance(data, dict):
        raise NotebookError(f"not a notebook: top level is a JSON {json_type(data)}, not an object")

    if "cells" in data:
        raw_cells = _expect_list(data["cells"], "'cells'")
        return [_read_cell(number, raw, "source") for number, raw in enumerate(raw_cells, 1)]

    if "worksheets" in data:
        # nbformat 3: cells live in worksheets and code cells keep their text in "input".
        worksheets = _expect_list(data["worksheets"], "'worksheets'")
        cells: list[Cell] = []
        for ws_number, worksheet in enumerate(worksheets, 1):
            if not isinstance(worksheet, dict):
                raise NotebookError(
                    f"worksheet {ws_number}: is a JSON {json_type(worksheet)}, not an object"
                )
            raw_cells = _expect_list(worksheet.get("cells", []), f"worksheet {ws_number}: 'cells'")
            for raw in raw_cells:
                cells.append(_read_cell(len(cells) + 1, raw, "input"))
        return cells

    return []


def _read_cell(number: int, raw: Any, code_key: str) -> Cell:
    if not isinstance(raw, dict):
        raise NotebookError(f"cell {number}: is a JSON {json_type(raw)}, not an object")
    kind = raw.get("cell_type", "unknown")
    if not isinstance(kind, str):
        raise NotebookError(f"cell {number}: 'cell_type' is not a string")
    key = code_key if kind == "code" and code_key in raw else "source"
    return Cell(number, kind, _join_source(raw.get(key, ""), number, key))


def _join_source(value: Any, number: int, key: str) -> str:
    if isinstance(value, str):
        return _encodable(value)
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return _encodable("".join(value))
    raise NotebookError(f"cell {number}: '{key}' is neither a string nor a list of strings")


def _encodable(text: str) -> str:
    """JSON can spell an unpaired surrogate (`"\\ud800"`), which no UTF-8 text holds: it
    would break the parser and every report that writes the snippet, so it becomes U+FFFD,
    as any editor would show it."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")
"""json.loads joins escaped pairs into one character, so any surrogate left is unpaired."""


def _expect_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise NotebookError(f"{what} is a JSON {json_type(value)}, not a list")
    return value


# --------------------------------------------------------------------------- masking

# Cell magics whose body is ordinary Python: masking the body would hide real code.
_PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_SHELL_CELL_MAGICS = frozenset({"bash", "sh", "system"})

_INDENT = re.compile(r"[ \t\f]*")
_CELL_MAGIC = re.compile(r"%%(\w*)(.*)")
# `files = !ls`, `x = %env HOME`, `a, b = !cmd`: the right side is IPython, not Python.
# A lone `=` followed by `!`/`%` is never valid Python (`!=` and `%=` do not match).
_MAGIC_ASSIGNMENT = re.compile(r"[\w.,\s\[\]]+=\s*([!%])(.*)", re.DOTALL)
_PACKAGE_MAGIC = re.compile(r"%(pip|conda|mamba)\b(.*)", re.DOTALL)
_SHELL_LINE_MAGIC = re.compile(r"%(?:sx|system)\b(.*)", re.DOTALL)
_INSTALL = re.compile(
    r"""(?:^|[;&|(])\s*(?:sudo\s+)?
        (?: pip[\d.]* | uv\s+pip | conda | mamba | micromamba
          | (?:\S*python[\d.]*|\{sys\.executable\})\s+-m\s+pip )
        (?:\s+-{1,2}[\w-]+)*\s+install\b""",
    re.VERBOSE,
)


@dataclass(slots=True)
class _ScanState:
    """Just enough lexical state to know whether a line starts a new statement.

    A `%` or `!` at the start of a line is only IPython syntax when the line begins a
    statement: inside brackets (`(a\\n % b)`), after a backslash continuation or inside
    a multi-line string it is plain Python or string content.
    """

    quote: str | None = None
    """Delimiter of a string still open at the end of the previous line."""
    depth: int = 0
    continued: bool = False
    """The previous line ended with a backslash continuation."""

    def at_statement_start(self) -> bool:
        return self.quote is None and self.depth == 0 and not self.continued

    def scan(self, line: str) -> int:
        """Advance over one line of Python; return where its comment starts (or its length)."""
        self.continued = False
        i, n = 0, len(line)
        escaped_newline = False
        comment_at = n
        while i < n:
            if self.quote is not None:
                if line[i] == "\\":
                    escaped_newline = i == n - 1
                    i += 2
                elif line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                else:
                    i += 1
                continue
            char = line[i]
            if char == "#":
                comment_at = i
                break
            if char in "'\"":
                self.quote = char * 3 if line.startswith(char * 3, i) else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "\\" and i == n - 1:
                self.continued = True
            i += 1
        if self.quote in ("'", '"') and not escaped_newline:
            # An unterminated one-line string is a syntax error; don't let it swallow the cell.
            self.quote = None
        return comment_at


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    """The line as Python sees it: original, or indentation + `pass` when masked."""
    masked: bool
    shell: str | None = None
    """For the first line of a shell/magic command: the command text (continuations joined)."""


def _lines_of(source: str) -> list[str]:
    # Split only on real line breaks: str.splitlines would also split on \f, \x1c or
    # \u2028, which Python does not treat as line ends, and the mapping would drift.
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _indent(line: str) -> str:
    match = _INDENT.match(line)
    assert match is not None  # the pattern matches the empty string
    return match.group()


def _analyze_cell(source: str) -> list[_Line]:
    """Decide for each line of one code cell whether it is Python or IPython syntax."""
    lines = _lines_of(source)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        magic = _CELL_MAGIC.match(lines[first].lstrip(" \t\f"))
        if magic is not None and magic.group(1) not in _PYTHON_BODY_CELL_MAGICS:
            return _mask_cell_magic(lines, first, magic.group(1), magic.group(2))
    result: list[_Line] = []
    state = _ScanState()
    magic_indent: str | None = None  # set while inside a backslash-continued magic
    pending: list[str] = []  # pieces of the shell command being continued
    pending_at = -1
    for index, line in enumerate(lines):
        if magic_indent is not None:
            # Continuation of a magic: its own indentation means nothing to Python,
            # so reuse the magic's, which is known to be valid here.
            result.append(_Line(magic_indent + "pass", True))
            pending.append(line.rstrip().removesuffix("\\").strip())
            if not line.rstrip().endswith("\\"):
                magic_indent = None
                _attach_shell(result, pending_at, pending)
            continue
        if index == first and _CELL_MAGIC.match(line.lstrip(" \t\f")):
            # `%%time` and friends: only the magic line is IPython.
            result.append(_Line(_indent(line) + "pass", True))
            continue
        if state.at_statement_start():
            command = _ipython_command(line, state)
            if command is not None:
                indent = _indent(line)
                result.append(_Line(indent + "pass", True))
                pending, pending_at = [command.rstrip().removesuffix("\\").strip()], index
                if line.rstrip().endswith("\\"):
                    magic_indent = indent
                else:
                    _attach_shell(result, pending_at, pending)
                continue
        state.scan(line)
        result.append(_Line(line, False))
    if magic_indent is not None:
        _attach_shell(result, pending_at, pending)
    return result


def _ipython_command(line: str, state: _ScanState) -> str | None:
    """The IPython text of a line that starts a statement, or None if it is Python.

    The returned text is what follows `!` for shell escapes (so it can be checked for
    package installs); for other IPython syntax any non-None value only means "mask".
    """
    stripped = line.lstrip(" \t\f")
    if stripped.startswith("!"):
        return stripped.lstrip("!")
    if stripped.startswith("%"):
        package = _PACKAGE_MAGIC.match(stripped)
        if package is not None:
            return package.group(1) + package.group(2)
        shell = _SHELL_LINE_MAGIC.match(stripped)
        return shell.group(1) if shell is not None else stripped
    if stripped.startswith("?"):
        return stripped
    assignment = _MAGIC_ASSIGNMENT.match(stripped)
    if assignment is not None:
        rest = assignment.group(2)
        if assignment.group(1) == "!":
            return rest
        return _ipython_command("%" + rest, state)
    # Help syntax: `torch.cuda?`. `?` never ends Python code outside strings and
    # comments, so scan a copy of the state to rule those out.
    probe = _ScanState(state.quote, state.depth, state.continued)
    comment_at = probe.scan(line)
    if probe.quote is None and line[:comment_at].rstrip().endswith("?"):
        return stripped
    return None


def _mask_cell_magic(lines: list[str], first: int, name: str, args: str) -> list[_Line]:
    """Mask a whole cell whose body is not Python (`%%bash`, `%%writefile`, ...).

    The body's indentation is meaningless to Python, so every line becomes an
    unindented `pass`; keeping the body's indentation would be an IndentationError.
    """
    result = [_Line("pass", True) for _ in lines]
    is_shell = name in _SHELL_CELL_MAGICS or (
        name == "script" and args.split()[:1] in (["bash"], ["sh"])
    )
    if is_shell:
        pending: list[str] = []
        start = -1
        for index in range(first + 1, len(lines)):
            piece = lines[index].rstrip()
            if not pending:
                start = index
            pending.append(piece.removesuffix("\\").strip())
            if not piece.endswith("\\"):
                _attach_shell(result, start, pending)
                pending = []
        if pending:
            _attach_shell(result, start, pending)
    return result


def _attach_shell(result: list[_Line], index: int, pieces: list[str]) -> None:
    """Record a complete (continuation-joined) command on the line where it started."""
    command = " ".join(piece for piece in pieces if piece)
    if _INSTALL.search(command):
        line = result[index]
        result[index] = _Line(line.text, line.masked, command)


# --------------------------------------------------------------------------- virtual module


@dataclass(frozen=True, slots=True)
class VirtualModule:
    """The code cells of a notebook as one Python module, with the way back to cells."""

    code: str
    cell_of_line: tuple[int, ...]
    """`cell_of_line[L - 1]` is the cell number of virtual line L."""
    line_in_cell: tuple[int, ...]
    """`line_in_cell[L - 1]` is the 1-based line of virtual line L within its cell."""
    masked_lines: frozenset[int]
    """Virtual lines that held IPython syntax: a finding there would point at `pass`."""

    def to_cell(self, line: int) -> tuple[int, int]:
        """Map a 1-based virtual line to (cell number, 1-based line within the cell)."""
        if not 1 <= line <= len(self.cell_of_line):
            raise ValueError(
                f"line {line} is outside the virtual module (1..{len(self.cell_of_line)})"
            )
        return self.cell_of_line[line - 1], self.line_in_cell[line - 1]


def build_virtual_module(cells: Sequence[Cell], skip: Container[int] = ()) -> VirtualModule:
    """Join the code cells (except those numbered in `skip`) into one module.

    `skip` exists because one cell that does not parse (an unclosed bracket, leftover
    IPython syntax we do not recognize) would otherwise make the whole module fail to
    parse; the caller parses cells one by one and leaves the broken ones out.
    """
    parts: list[str] = []
    cell_of_line: list[int] = []
    line_in_cell: list[int] = []
    masked: set[int] = set()
    for cell in cells:
        if cell.kind != "code" or cell.number in skip:
            continue
        for number, line in enumerate(_analyze_cell(cell.source), 1):
            parts.append(line.text + "\n")
            cell_of_line.append(cell.number)
            line_in_cell.append(number)
            if line.masked:
                masked.add(len(cell_of_line))
    return VirtualModule(
        code="".join(parts),
        cell_of_line=tuple(cell_of_line),
        line_in_cell=tuple(line_in_cell),
        masked_lines=frozenset(masked),
    )


def magic_shell_commands(cells: Sequence[Cell]) -> list[tuple[int, int, str]]:
    """Package installs run from the notebook: (cell number, line in cell, command).

    Installing a CUDA-only package (`!pip install flash-attn`) is a portability problem
    the Python analysis cannot see, because the line is masked. The command is returned
    in shell form, `%pip install x` as `pip install x`, so that `!pip` and `%pip`
    look alike; backslash-continued lines are joined and reported on their first line.
    """
    found: list[tuple[int, int, str]] = []
    for cell in cells:
        if cell.kind != "code":
            continue
        for number, line in enumerate(_analyze_cell(cell.source), 1):
            if line.shell is not None:
                found.append((cell.number, number, line.shell))
    return found
