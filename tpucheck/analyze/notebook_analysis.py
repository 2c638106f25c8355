"""Notebooks through the Python analyzer: one virtual module of the code cells, findings
mapped back to (cell, line in cell); cells that do not parse are left out and reported."""

from __future__ import annotations

import re
from collections.abc import Callable

from tpucheck.analyze.deps import match_requirements
from tpucheck.analyze.manifests import Requirement
from tpucheck.analyze.notebook import (
    Cell,
    NotebookError,
    build_virtual_module,
    magic_shell_commands,
    read_cells,
)
from tpucheck.analyze.python import (
    ParseFailure,
    PythonIndex,
    analyze_source,
    find_suppressions,
    parse_python,
)
from tpucheck.findings import FileResult, RawMatch, Reason, ScanError, Span, suppression_key
from tpucheck.ruleset.model import Rule
from tpucheck.ruleset.names import normalize_package

_INSTALL = re.compile(r"\b(pip|conda|mamba)\s+install\s+(?P<args>.*)$")
_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")
_OPTIONS_WITH_VALUE = {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target", "-n", "--name", "-p", "--prefix", "--channel"}
_INDEX_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}


def analyze_notebook(path: str, text: str, index: PythonIndex, dependency_rules: list[Rule], result: FileResult, *, prefilter: bool = True) -> None:
    try:
        cells = read_cells(text)
    except NotebookError as exc:
        result.error = ScanError(path, "notebook-error", str(exc))
        return
    result.lines = sum(c.source.count("\n") + 1 for c in cells if c.kind == "code" and c.source)
    result.matches.extend(_install_matches(cells, dependency_rules))
    module = build_virtual_module(cells)
    if prefilter and not index.candidate(module.code):
        return
    analysis = analyze_source(module.code, index, prefilter=False)
    if analysis.error_kind is not None:
        broken = _broken_cells(cells)
        if broken:
            number, kind, message = broken[0]
            result.error = ScanError(path, kind, f"cell {number}: {message}" + (f" (and {len(broken) - 1} more cells)" if len(broken) > 1 else ""))
            module = build_virtual_module(cells, skip={n for n, _, _ in broken})
            analysis = analyze_source(module.code, index, prefilter=False)
        if analysis.error_kind is not None:
            result.error = ScanError(path, analysis.error_kind, analysis.error_message or "")
            return
    result.parsed = True
    for match in analysis.matches:
        if match.span.line in module.masked_lines:
            continue
        cell, line = module.to_cell(match.span.line)
        end_cell, end_line = module.to_cell(min(match.span.end_line, len(module.cell_of_line)))
        if end_cell != cell:
            end_line = line
        span = Span(line, match.span.column, end_line, match.span.end_column)
        reasons = tuple(_in_cell(reason, module.to_cell) for reason in match.reasons)
        result.matches.append(RawMatch(match.rule_id, span, match.snippet, cell, match.guarded, match.detail, match.severity, match.role, reasons))
    if analysis.matches:
        for virtual_line, suppression in find_suppressions(module.code).items():
            cell, line = module.to_cell(virtual_line)
            result.suppressions[suppression_key(line, cell)] = suppression


def _in_cell(reason: Reason, to_cell: Callable[[int], tuple[int, int]]) -> Reason:
    """Evidence found in the notebook's virtual module, placed in its cell."""
    if reason.line is None:
        return reason
    cell, line = to_cell(reason.line)
    return Reason(reason.rule, reason.evidence, line, cell)


def _broken_cells(cells: list[Cell]) -> list[tuple[int, str, str]]:
    """(cell number, error kind, message) of each code cell that does not parse alone."""
    broken = []
    for cell in cells:
        if cell.kind != "code":
            continue
        code = build_virtual_module([cell]).code
        try:
            parse_python(code)
        except ParseFailure as exc:
            broken.append((cell.number, exc.kind, exc.message))
    return broken


def _install_matches(cells: list[Cell], rules: list[Rule]) -> list[RawMatch]:
    """`!pip install flash-attn` in a notebook asks for a CUDA-only package too."""
    if not rules:
        return []
    sources = {c.number: c.source.splitlines() for c in cells}
    matches: list[RawMatch] = []
    for cell, line, command in magic_shell_commands(cells):
        original = sources.get(cell, [])
        text = original[line - 1] if 0 < line <= len(original) else command
        for requirement in install_requirements(command, text, line):
            for raw in match_requirements([requirement], rules):
                matches.append(RawMatch(raw.rule_id, raw.span, raw.snippet, cell, False, raw.detail))
    return matches


def install_requirements(command: str, line_text: str, line: int) -> list[Requirement]:
    found = _INSTALL.search(command)
    if not found:
        return []
    ecosystem = "conda" if found.group(1) in ("conda", "mamba") else "pip"
    tokens = found.group("args").split()
    requirements: list[Requirement] = []
    skip_next = False
    search_from = 0
    for position, token in enumerate(tokens):
        if skip_next:
            skip_next = False
            continue
        token = token.strip("'\"")
        if token in ("&&", ";", "|", "||") or token.startswith(("&", ";", "|")):
            break
        column = line_text.find(token, search_from)
        search_from = max(search_from, column + len(token)) if column >= 0 else search_from
        span_start = column + 1 if column >= 0 else 1
        if token in _INDEX_OPTIONS or any(token.startswith(o + "=") for o in _INDEX_OPTIONS):
            url = token.split("=", 1)[1] if "=" in token else (tokens[position + 1] if position + 1 < len(tokens) else "")
            skip_next = "=" not in token
            requirements.append(Requirement("index", "", url, f"{token} {url}".strip(), ecosystem, line, span_start, line, span_start + len(token)))
            continue
        if token in _OPTIONS_WITH_VALUE:
            skip_next = True
            continue
        if token.startswith("-"):
            continue
        name = _NAME.match(token.split("::")[-1])
        if not name:
            continue
        requirements.append(
            Requirement("package", normalize_package(name.group(1)), token[name.end():], token, ecosystem, line, span_start, line, span_start + len(token))
        )
    return requirements
