"""What makes code a test by what it does, not by its name: pytest's and unittest's
conventions, shared by the file-level script reading (judge/entrypoints.py) and the
function-level role (a `test_*` function in a product file).

A name alone is weak evidence in ML code: `def test(opt)` and `def test_net(...)` are many
a project's evaluation loop, called from its own `__main__`. A test asserts, checks
numerics, or lives where a test framework runs it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

import libcst as cst

from tpucheck.analyze.python.scope import dotted, node_code


@cache
def _framework_import(frameworks: frozenset[str]) -> re.Pattern[str] | None:
    if not frameworks:
        return None
    return re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:" + "|".join(sorted(map(re.escape, frameworks))) + r")\b", re.MULTILINE)


def imports_test_framework(source: str, frameworks: frozenset[str]) -> bool:
    """Whether the module's text imports a test framework (rules/judgement.yaml
    `guards.test_frameworks`: pytest, unittest) in an import statement at any depth: a lazy
    `import pytest` in a helper counts too."""
    pattern = _framework_import(frameworks)
    return pattern is not None and pattern.search(source) is not None


def checks_like_a_test(function: cst.FunctionDef, checks: frozenset[str]) -> bool:
    """Whether a function's own body asserts or compares numerics (`assert`, `allclose`,
    `gradcheck`: rules/judgement.yaml `guards.numerics_checks`): what a test does. Nested
    functions and classes are their own."""
    stack: list[cst.CSTNode] = list(function.body.children)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assert):
            return True
        if isinstance(node, cst.Call):
            func = node.func
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
            if name in checks:
                return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(node.children)
    return False



def skip_only_flags(module: cst.Module, source: str, candidates: set[str], skip_decorators: frozenset[str]) -> set[str]:
    """Module-level flags (`gpu_available = torch.cuda.is_available() and ...`, perhaps in
    a `try` whose handler sets it False) that only skip marks read: every use of the name,
    but its assignments at load, sits in a skip
    decorator's arguments (`@pytest.mark.skipif(not gpu_available, ...)`) or in
    `pytestmark`. Such a query picks no device; it decides which tests run (audit BC:
    deepchem's Lightning tests). A flag read anywhere else (a device pick, a branch) is not
    one. Read only for modules that assign such a flag, so the tree is walked only then."""
    if not candidates or ("pytestmark" not in source and not any(name in source for name in skip_decorators)):
        return set()  # no skip mark to read: the tree is not walked
    marks: list[str] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Decorator) and isinstance(node.decorator, cst.Call):
            parts = dotted(node.decorator.func)
            if parts is not None and parts[-1] in skip_decorators:
                marks.append(node_code(node.decorator))
                continue
        if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == "pytestmark" for t in node.targets):
            marks.append(node_code(node.value))
            continue
        stack.extend(node.children)
    found: set[str] = set()
    for name in candidates:
        word = re.compile(rf"\b{re.escape(name)}\b")
        in_marks = sum(len(word.findall(mark)) for mark in marks)
        if in_marks and len(word.findall(source)) == in_marks + _assignments(module.body, name):
            found.add(name)
    return found


def _module_level(statements: Sequence[cst.CSTNode]) -> list[cst.BaseSmallStatement]:
    """The small statements of a block and of the `try`, `if` and `with` blocks in it, not
    of its functions or classes: what runs when the module loads (`try: import torch;
    gpu_ok = torch.cuda.is_available() except ImportError: gpu_ok = False`)."""
    found: list[cst.BaseSmallStatement] = []
    stack: list[cst.CSTNode] = list(reversed(statements))
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            found.extend(node.body)
        elif isinstance(node, (cst.Try, cst.If, cst.With, cst.ExceptHandler, cst.Else, cst.Finally, cst.IndentedBlock)):
            stack.extend(reversed([c for c in node.children if isinstance(c, (cst.BaseSuite, cst.BaseStatement, cst.ExceptHandler, cst.Else, cst.Finally, cst.If))]))
    return found


def assigned_names(statements: Sequence[cst.CSTNode], value_holds: Callable[[cst.BaseExpression], bool] = lambda _: True) -> set[str]:
    """The plain names these statements assign at load (`name = value`), where the value
    holds `value_holds` (an availability query, for `skip_only_flags`' candidates)."""
    return {
        target.target.value
        for small in _module_level(statements) if isinstance(small, cst.Assign) and value_holds(small.value)
        for target in small.targets if isinstance(target.target, cst.Name)
    }  # fmt: skip


def _assignments(statements: Sequence[cst.CSTNode], name: str) -> int:
    return sum(
        1 for small in _module_level(statements) if isinstance(small, cst.Assign) for target in small.targets if isinstance(target.target, cst.Name) and target.target.value == name
    )
