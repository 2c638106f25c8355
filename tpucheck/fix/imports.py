"""`import torch`, added once, where the module's imports are, and only when an edit names
torch and nothing at module level binds it."""

from __future__ import annotations

import libcst as cst

__all__ = ["add_import_torch"]


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def add_import_torch(module: cst.Module) -> cst.Module:
    """After the last import of the module's leading imports (or after its docstring, or
    first), with no blank line of its own, so the lines around it stay as they were."""
    body = list(module.body)
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    last_import = None
    for position in range(index, len(body)):
        if _is_import(body[position]):
            last_import = position
        elif last_import is not None:
            break
    if last_import is not None:
        index = last_import + 1
    statement = cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name("torch"))])])
    if index == 0 and body:
        # take over the first statement's leading comments, so they stay at the top
        statement = statement.with_changes(leading_lines=body[0].leading_lines)
        body[0] = body[0].with_changes(leading_lines=())
    body.insert(index, statement)
    return module.with_changes(body=body)
