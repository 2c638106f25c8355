"""Parameters that stand for a CUDA availability flag: a module function every module-level
call of which passes one (`make(has_cuda)` called as `make(torch.cuda.is_available())`).

Why: theseus's setup.py builds `CUDAExtension if has_cuda else CppExtension` in a builder
its module calls with the flag it set from `torch.cuda.is_available()` (blind set 36): a
test of the parameter holds only where CUDA does.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

__all__ = ["flag_parameters"]


class _Calls(cst.CSTVisitor):
    """The calls of module functions by name, outside any function or class body."""

    def __init__(self, functions: set[str]) -> None:
        self.functions = functions
        self.found: dict[str, list[cst.Call]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in self.functions:
            self.found.setdefault(node.func.value, []).append(node)


def flag_parameters(module: cst.Module, is_flag: Callable[[cst.BaseExpression], bool]) -> set[str]:
    """Parameters of module functions that every call at the module's level passes a CUDA
    or package availability flag (`make(has_cuda)` called as
    `make(torch.cuda.is_available())`): a test of one holds only where the flag does
    (theseus's `CUDAExtension if has_cuda else CppExtension`, blind set 36)."""
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    if not functions:
        return set()
    calls = _Calls(set(functions))
    for statement in module.body:
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            statement.visit(calls)
    flags: set[str] = set()
    for name, found in calls.found.items():
        for index, param in enumerate(functions[name].params.params):
            values = [_argument(call, index, param.name.value) for call in found]
            if all(v is not None and is_flag(v) for v in values):
                flags.add(param.name.value)
    return flags


def _argument(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """The value a call passes for a parameter (by position or keyword), or None."""
    if any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    if index < len(positional):
        return positional[index].value
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
