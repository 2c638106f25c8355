"""Notebooks are fixed cell by cell: each code cell with findings is parsed and rewritten on
its own (finding positions are relative to their cell), and only that cell's source
changes in the JSON.

The notebook is written back only when its JSON round-trips unchanged through
`json.dumps` with the indentation it was written with (Jupyter's one space, or two, or
four): otherwise rewriting would reformat the whole file, and the notebook is reported as
not fixable. A cell with IPython syntax (`%magic`, `!shell`) is not Python and is left as
it is, its findings reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import libcst as cst

from tpucheck.analyze.notebook import Cell, build_virtual_module
from tpucheck.fix.base import MANUAL, Outcome, Target, torch_binding

__all__ = ["NotebookProblem", "fix_notebook"]

FixCell = Callable[..., tuple[str, list[Outcome]]]
"""fix_cell(code, targets, torch_name=...): the cell's new code and outcomes."""


class NotebookProblem(Exception):
    """The notebook cannot be rewritten without changing more than its code."""


def _style(text: str, data: Any) -> tuple[int | None, bool, bool]:
    """(indent, ascii-escaped, ends with a newline) that reproduce `text` from `data`."""
    for indent in (1, 2, 4, None):
        for ensure_ascii in (False, True):
            dumped = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii)
            if text in (dumped, dumped + "\n"):
                return indent, ensure_ascii, text.endswith("\n")
    raise NotebookProblem("its JSON is not formatted as Jupyter writes it, so rewriting a cell would reformat the file; fix it by hand")


def fix_notebook(text: str, targets: list[Target], fix_cell: FixCell) -> tuple[str, list[Outcome]]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise NotebookProblem(f"not valid JSON ({exc})") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookProblem("no nbformat 4 `cells` list")
    indent, ensure_ascii, newline = _style(text, data)
    by_cell: dict[int, list[Target]] = {}
    for target in targets:
        by_cell.setdefault(target.finding.cell or 0, []).append(target)
    torch_name = _torch_name(cells)
    outcomes: list[Outcome] = []
    changed = False
    for number, cell_targets in sorted(by_cell.items()):
        cell = cells[number - 1] if 1 <= number <= len(cells) else None
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            outcomes += [Outcome(t, MANUAL, "not in a code cell; fix it by hand") for t in cell_targets]
            continue
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else str(source)
        if _has_ipython(code):
            outcomes += [Outcome(t, MANUAL, f"cell {number} has IPython syntax (%magic, !shell), which is not Python; fix it by hand") for t in cell_targets]
            continue
        new_code, cell_outcomes = fix_cell(code, cell_targets, torch_name=torch_name)
        if torch_name is None and _IMPORT.search(new_code):
            torch_name = "torch"  # this cell now imports it: the later ones use it
        outcomes += [replace(o, note=f"cell {number}: {o.note}") for o in cell_outcomes]
        if new_code != code:
            cell["source"] = new_code.splitlines(keepends=True) if isinstance(source, list) else new_code
            changed = True
    if not changed:
        return text, outcomes
    dumped = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii)
    return dumped + ("\n" if newline else ""), outcomes


_IMPORT = re.compile(r"^import torch(?:\.[\w.]+)?(?:\s+as\s+(\w+))?\s*$", re.MULTILINE)


def _torch_name(cells: list[Any]) -> str | None:
    """The name a code cell binds torch to (the cells are one program), if any does; a
    cell with IPython syntax is read line by line."""
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else str(source)
        try:
            name = torch_binding(cst.parse_module(code))
        except cst.ParserSyntaxError:
            found = _IMPORT.search(code)
            name = (found.group(1) or "torch") if found else None
        if name is not None:
            return name
    return None


def _has_ipython(code: str) -> bool:
    """Whether the scan's notebook reader masks any line of the cell as IPython syntax."""
    return bool(build_virtual_module([Cell(1, "code", code)]).masked_lines)
