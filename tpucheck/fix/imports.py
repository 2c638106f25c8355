"""Imports a fix adds or leaves unused.

`import torch` goes where the code that needs it can see it: at module level, after the
module's leading imports (in its sorted place when they are sorted), or, when the module
imports torch only inside functions, at the top of the function that needs it. An import of
a CUDA name (`from torch.cuda.amp import autocast`) that the fix left with no use is
removed, as long as the module had used it and does not re-export names (`__all__`).
"""

from __future__ import annotations

import libcst as cst

__all__ = ["add_import_torch", "add_local_import", "dotted", "drop_unused_imports"]


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _import_torch() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name("torch"))])])


def _sort_key(statement: cst.CSTNode) -> tuple[int, str] | None:
    """isort's order within a block: `import x` lines before `from x import y` lines
    (force_sort_within_sections off), each by module name, case-insensitive."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Import):
        return 0, dotted(small.names[0].name).lower()
    if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
        return 1, dotted(small.module).lower()
    return None


def add_import_torch(module: cst.Module) -> cst.Module:
    """`import torch` among the module's leading imports: in the sorted place of the block
    where `torch` belongs when that block is sorted, else after the last import (or after
    the docstring, or first), with no blank line of its own."""
    body = list(module.body)
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    first_import, last_import = None, None
    for position in range(index, len(body)):
        if _is_import(body[position]):
            first_import = position if first_import is None else first_import
            last_import = position
        elif last_import is not None:
            break
    if last_import is not None:
        index = _sorted_place(body, first_import or 0, last_import) or last_import + 1
    statement = _import_torch()
    if index < len(body) and last_import is not None and index <= last_import and body[index].leading_lines:
        # first in its block: the block's blank lines and comments stay above it
        statement = statement.with_changes(leading_lines=body[index].leading_lines)
        body[index] = body[index].with_changes(leading_lines=())
    elif index == 0 and body:
        # take over the first statement's leading comments, so they stay at the top
        statement = statement.with_changes(leading_lines=body[0].leading_lines)
        body[0] = body[0].with_changes(leading_lines=())
    body.insert(index, statement)
    return module.with_changes(body=body)


def _sorted_place(body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement], first: int, last: int) -> int | None:
    """Where `import torch` goes in the sorted block (statements between blank lines) of
    third-party imports, if there is one; None when no block is sorted."""
    blocks: list[list[int]] = []
    for position in range(first, last + 1):
        if not blocks or body[position].leading_lines:
            blocks.append([])
        blocks[-1].append(position)
    mine = (0, "torch")
    for block in blocks:
        keys = [key for p in block if (key := _sort_key(body[p])) is not None]
        if len(block) < 2 or len(keys) != len(block) or keys != sorted(keys):
            continue
        if not any(name.split(".")[0] in _THIRD_PARTY_NEIGHBOURS for _, name in keys):
            continue
        for position, key in zip(block, keys, strict=True):
            if key > mine:
                return position
        return block[-1] + 1
    return None


_THIRD_PARTY_NEIGHBOURS = frozenset({"numpy", "torch", "torchvision", "tqdm", "einops", "transformers", "scipy", "yaml", "PIL", "pil", "matplotlib", "wandb", "tiktoken", "datasets", "accelerate"})
"""Packages whose import block is the third-party one `import torch` joins (a sorted block of
standard-library imports is not torch's place)."""


def add_local_import(function: cst.FunctionDef) -> cst.FunctionDef:
    """`import torch` as the first statement of `function` (after its docstring), indented
    as its body is."""
    body = function.body
    if not isinstance(body, cst.IndentedBlock):
        return function
    statements = list(body.body)
    index = 1 if statements and _is_docstring(statements[0]) else 0
    statements.insert(index, _import_torch())
    return function.with_changes(body=body.with_changes(body=statements))


def drop_unused_imports(before: cst.Module, after: cst.Module) -> cst.Module:
    """`after` without the names imported from torch.cuda (or `cuda` from torch) that
    `before` used and `after` no longer does."""
    if _defines_all(after):
        return after
    used_before, used_after = _used_names(before), _used_names(after)

    class _Drop(cst.CSTTransformer):
        def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom | cst.RemovalSentinel:
            module = dotted(updated.module) if updated.module is not None else ""
            if updated.relative or isinstance(updated.names, cst.ImportStar) or not (module.startswith("torch.cuda") or module == "torch"):
                return updated
            kept = []
            for alias in updated.names:
                bound = _bound(alias)
                cuda = module.startswith("torch.cuda") or dotted(alias.name) == "cuda"
                if cuda and bound in used_before and bound not in used_after:
                    continue
                kept.append(alias)
            if len(kept) == len(updated.names):
                return updated
            if not kept:
                return cst.RemovalSentinel.REMOVE
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(names=kept)

        def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine | cst.RemovalSentinel:
            if not updated.body and original.body:
                if original.trailing_whitespace.comment is not None or any(line.comment is not None for line in original.leading_lines):
                    return original  # a comment sits on it: keep the line as it was
                return cst.RemovalSentinel.REMOVE
            return updated

    return after.visit(_Drop())


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return dotted(alias.name).split(".")[0]


def _used_names(module: cst.Module) -> set[str]:
    """Every name read outside import statements."""
    used: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # `x.empty_cache` reads x, not a name `empty_cache`
            return False

        def visit_Name(self, node: cst.Name) -> None:
            used.add(node.value)

    module.visit(_Names())
    return used


def _defines_all(module: cst.Module) -> bool:
    return "__all__" in _used_names(module)


def dotted(node: cst.BaseExpression) -> str:
    """`a.b.c` for a Name or Attribute chain, "" for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""
