"""Kernel modules the product calls only as one side of a choice.

Why: a Triton kernel module (`@triton.jit`) loads on a TPU host (Triton installs there;
only launching a kernel needs a GPU), so what decides whether the product needs the kernel
is where its callers call it. When every call the product makes into the module sits on
one side of an `if`/`else` (or a conditional expression) whose other side does the same
job without the module (`if self.use_rel_pos: x = fused_rel_attention(q, k, v) else: x =
F.scaled_dot_product_attention(q, k, v)`), the port is choosing the other side, not
writing a kernel (blind set 12: segment-anything-fast, banded B, graded D on its Triton
kernel). A call outside such a choice, or any other use of the module's names (passed on
as a value, re-exported and called elsewhere), keeps the kernels on the main path.

Read with `ast`, and only for the few product files that import such a module: the scan of
every other file stays line-based.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from tpucheck.analyze.pyparse import parse_or_none
from tpucheck.findings import Import, ImportFacts, Reason

__all__ = ["CHOSEN_CALL", "chosen_kernel_modules"]

CHOSEN_CALL = "fallback.chosen-call"
_EVIDENCE_LIMIT = 60


def chosen_kernel_modules(
    product: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    read: Callable[[str], str | None],
    resolve: Callable[[str, Import], str | None],
    packages: frozenset[str],
    markers: tuple[str, ...],
) -> dict[str, Reason]:
    """Kernel modules of the product (they import one of `packages` and hold one of
    `markers`: rules/judgement.yaml `kernels.chosen_packages`, `chosen_markers`) -> why they
    are optional, for those whose every product call sits on one side of a choice.
    `resolve(importer, import)` gives the project path an import names, or None."""
    paths = sorted(product)
    kernels = {p for p in paths if _imports(facts(p), packages) and _marked(read(p), markers)}
    if not kernels:
        return {}
    uses: dict[str, list[tuple[str, int, str] | None]] = {k: [] for k in kernels}  # None: a use outside a choice
    for path in paths:
        known = facts(path)
        if known is None or not any(resolve(path, imp) in kernels for imp in known.imports):
            continue
        text = read(path) or ""
        tree = parse_or_none(text)
        if tree is None:
            continue
        names: dict[str, str] = {}  # local name -> the kernel module it comes from
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):  # `import pkg.kernels as k`: uses through k are not followed
                for alias in node.names:
                    target = resolve(path, Import(0, alias.name, False))
                    if target in kernels and target != path:
                        uses[target].append(None)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    module = f"{node.module}.{alias.name}" if node.module else alias.name
                    target = resolve(path, Import(node.level, module, False))
                    if target in kernels and target != path:
                        names[alias.asname or alias.name] = target
        for target, site in _uses(tree, text, names, path):
            uses[target].append(site)
    out: dict[str, Reason] = {}
    for kernel, sites in sorted(uses.items()):
        if sites and all(site is not None for site in sites):
            importer, line, test = next(site for site in sites if site is not None)
            out[kernel] = Reason(CHOSEN_CALL, f"every call the product makes into {kernel} is one side of a choice (`{test}` at {importer}:{line}): the other side runs without it")
    return out


def _imports(known: ImportFacts | None, packages: frozenset[str]) -> bool:
    return known is not None and any(not imp.level and imp.module.partition(".")[0] in packages for imp in known.imports)


def _marked(text: str | None, markers: tuple[str, ...]) -> bool:
    return text is not None and any(marker in text for marker in markers)


def _uses(tree: ast.Module, text: str, names: dict[str, str], path: str) -> Iterable[tuple[str, tuple[str, int, str] | None]]:
    """Each load of an imported kernel-module name: (its module, the choice it is called
    on one side of, or None)."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            target = names[node.id]
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute):  # `kernels.fused(x)` after `from pkg import kernels`
                node, parent = parent, parents.get(id(parent))
            called = isinstance(parent, ast.Call) and parent.func is node
            yield target, _choice(node, parents, {n for n, t in names.items() if t == target}, text, path) if called else None


def _choice(node: ast.AST, parents: dict[int, ast.AST], module_names: set[str], text: str, path: str) -> tuple[str, int, str] | None:
    """The nearest `if`/`else` or conditional expression with the use on one side and a
    non-empty other side that uses none of the module's names."""
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
        if isinstance(parent, ast.If) and parent.orelse:
            side, other = (parent.body, parent.orelse) if any(child is s for s in parent.body) else (parent.orelse, parent.body) if any(child is s for s in parent.orelse) else (None, None)
            if side is not None and other is not None and not _mentions(other, module_names) and not _raises(other):
                return path, parent.lineno, _quote(text, parent.test)
        if isinstance(parent, ast.IfExp) and child is not parent.test:
            other_arm = parent.orelse if child is parent.body else parent.body
            if not _mentions([other_arm], module_names):
                return path, parent.lineno, _quote(text, parent.test)
        child, parent = parent, parents.get(id(parent))
    return None


def _raises(statements: list[ast.stmt]) -> bool:
    """A side that only gives up (`else: raise ValueError(...)`) does no job of its own."""
    return bool(statements) and isinstance(statements[-1], ast.Raise)


def _mentions(nodes: Iterable[ast.AST], module_names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in module_names for node in nodes for n in ast.walk(node))


def _quote(text: str, test: ast.expr) -> str:
    segment = (ast.get_source_segment(text, test) or "").split("\n", 1)[0].strip()
    return segment if len(segment) <= _EVIDENCE_LIMIT else segment[: _EVIDENCE_LIMIT - 1] + "…"
