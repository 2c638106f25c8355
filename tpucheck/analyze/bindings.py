"""The project's kernel bindings: autograd Functions that call into a compiled extension the
project builds.

Why: the Python side of a custom kernel (`class Grouping(Function)` whose forward allocates
`torch.cuda.FloatTensor(m, c).zero_()` for `pointops_cuda.grouping_forward` to fill) is
rewritten with the kernel: its buffers, streams and `custom_fwd` decorators are part of the
kernel's port, which the kernel's own findings price. Reported one by one they count the
same work again (audits S, V and Z judged such findings false: 16 of them). The class is
recognised by what it is and does (a subclass of `Function` whose body uses a name imported
from an extension a build of the project declares), never by its name.

Read with `ast`, and only for the product files that import such an extension.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from tpucheck.analyze.pyparse import parse_or_none
from tpucheck.findings import ImportFacts

__all__ = ["KERNEL_BINDING", "Binding", "binding_at", "extension_names", "kernel_bindings"]

KERNEL_BINDING = "set-aside.kernel-binding"
Binding = tuple[int, int, str, str]
"""(first line, last line, the class or function, what kernel it calls, as text)."""


def kernel_bindings(
    product: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    read: Callable[[str], str | None],
    extensions: frozenset[str],
    frameworks: frozenset[str] = frozenset(),
    loaded: frozenset[str] = frozenset(),
) -> dict[str, tuple[Binding, ...]]:
    """Path -> the autograd Functions in it that call one of `extensions` (the extension
    modules the project's builds declare, by their last name; never a framework's own
    module of that name, `from torch import _C`) or one of `loaded` (`backend._backend`:
    a module-level name a run-time build binds, `_backend = load(name=..., sources=[...])`
    in backend.py, as another module imports it: monosdf's hash encoder, audit AQ)."""
    out: dict[str, tuple[Binding, ...]] = {}
    for path in sorted(product):
        known = facts(path)
        if known is None:
            continue
        calls = bool(extensions) and any(set(imp.module.split(".")[-2:]) & extensions for imp in known.imports)
        calls = calls or any(".".join(imp.module.split(".")[-2:]) in loaded for imp in known.imports)
        # `triton`, or a fork under its own name (`import triton_pre_mlir as triton`: MPT)
        launches = any(imp.module.partition(".")[0].startswith("triton") for imp in known.imports)
        if not calls and not launches:
            continue
        tree = parse_or_none(read(path) or "")
        if tree is None:
            continue
        found: list[Binding] = []
        if calls:
            local = extension_names(tree, extensions, frameworks, loaded)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and any(_is_function(base) for base in node.bases):
                    used = next((local[n.id] for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in local), None)
                    if used is not None:
                        found.append((node.lineno, node.end_lineno or node.lineno, node.name, f"the project's `{used}` extension"))
        if launches:
            found.extend(_triton_launchers(tree))
        if found:
            out[path] = tuple(sorted(set(found)))
    return out


def _triton_launchers(tree: ast.Module) -> list[Binding]:
    """Functions that launch a Triton kernel the module defines (`_fwd_kernel[grid](...)`
    with `@triton.jit def _fwd_kernel`): the kernel's host side, whose `assert q.is_cuda`
    and CUDA buffers are rewritten with it (audit AM: MPT's flash-attention wrappers)."""
    kernels = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and any("triton" in ast.unparse(d) and ("jit" in ast.unparse(d) or "autotune" in ast.unparse(d)) for d in node.decorator_list)
    }
    found: list[Binding] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name in kernels:
            continue
        launched = next(
            (
                call.func.value.id
                for call in ast.walk(node)
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript) and isinstance(call.func.value, ast.Name) and call.func.value.id in kernels
            ),
            None,
        )
        if launched is not None:
            found.append((node.lineno, node.end_lineno or node.lineno, node.name, f"the Triton kernel `{launched}`"))
    return found


def binding_at(bindings: tuple[Binding, ...], line: int) -> Binding | None:
    return next((b for b in bindings if b[0] <= line <= b[1]), None)


def _is_function(base: ast.expr) -> bool:
    """`Function`, `autograd.Function`, `torch.autograd.Function`."""
    return (isinstance(base, ast.Name) and base.id == "Function") or (isinstance(base, ast.Attribute) and base.attr == "Function")


def extension_names(tree: ast.Module, extensions: frozenset[str], frameworks: frozenset[str], loaded: frozenset[str] = frozenset()) -> dict[str, str]:
    """Local names bound to an extension (`import pointops_cuda`, `from . import
    pointops_cuda as ops`, `from lib import _ext`, `from .backend import _backend` with
    `backend._backend` in `loaded`) -> the extension."""
    local: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                last = alias.name.rpartition(".")[2]
                if last in extensions and alias.name.partition(".")[0] not in frameworks:
                    local[alias.asname or alias.name.partition(".")[0]] = last
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").partition(".")[0] not in frameworks):
            module_last = (node.module or "").rpartition(".")[2]
            for alias in node.names:
                if alias.name in extensions or f"{module_last}.{alias.name}" in loaded:
                    local[alias.asname or alias.name] = alias.name
                elif module_last in extensions:
                    local[alias.asname or alias.name] = module_last
    return local
