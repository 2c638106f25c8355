"""What makes code a test by what it does, not by its name: pytest's and unittest's
conventions, shared by the file-level script reading (judge/entrypoints.py) and the
function-level role (a `test_*` function in a product file).

A name alone is weak evidence in ML code: `def test(opt)` and `def test_net(...)` are many
a project's evaluation loop, called from its own `__main__`. A test asserts, checks
numerics, or lives where a test framework runs it."""

from __future__ import annotations

import re

import libcst as cst

TEST_FRAMEWORKS = frozenset({"pytest", "unittest"})
"""Importing one makes a module a test module: its `test_*` functions are collected."""

NUMERICS_CHECKS = frozenset({"gradcheck", "gradgradcheck", "allclose", "assert_close", "assert_allclose"})
"""Calls that compare results: a kernel's self-check, whatever the file is named."""

_FRAMEWORK_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:" + "|".join(sorted(TEST_FRAMEWORKS)) + r")\b", re.MULTILINE)


def imports_test_framework(source: str) -> bool:
    """Whether the module's text imports pytest or unittest (an import statement, at any
    depth: a lazy `import pytest` in a helper counts too)."""
    return _FRAMEWORK_IMPORT.search(source) is not None


def checks_like_a_test(function: cst.FunctionDef) -> bool:
    """Whether a function's own body asserts or compares numerics (`assert`, `allclose`,
    `gradcheck`): what a test does. Nested functions and classes are their own."""
    stack: list[cst.CSTNode] = list(function.body.children)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assert):
            return True
        if isinstance(node, cst.Call):
            func = node.func
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
            if name in NUMERICS_CHECKS:
                return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(node.children)
    return False
