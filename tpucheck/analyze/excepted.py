"""Compiled extensions whose every call the product makes sits in a `try` whose handler does
the same job without them.

Why: a deformable-attention binding (`class MSDeformAttnFunction(Function)` calling
`MSDA.ms_deform_attn_forward`) called as `try: output = MSDeformAttnFunction.apply(...)
except: output = ms_deform_attn_core_pytorch(...)` has its PyTorch path wired by the caller:
where the kernel cannot run, the handler computes the same `output`. The port makes the
binding's import of the extension optional and lets the handler run, which is not writing
a kernel (blind set 19: fc-clip, banded B, capped at D on its kernels). A call outside such
a `try`, a handler that only re-raises or logs, or one that does another job keeps the
extension on the main path. Structure only: what the `try` computes and what its handler
computes, never the names.

The same holds for a call on the CUDA side of a test that only CUDA passes, whose other
side computes the same result (`if torch.cuda.is_available() and value.is_cuda: output =
MultiScaleDeformableAttnFunction.apply(...) else: output =
multi_scale_deformable_attn_pytorch(...)`): a TPU host takes that side by itself, so the
kernels are a performance note (`CUDA_TEST_TWIN`; audit AW: detrex's MSDeformAttn).

Read with `ast`, and only for the few product files that import a compiled extension the
project builds, or import from those.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from tpucheck.analyze.bindings import extension_names
from tpucheck.analyze.pyparse import parse_or_none
from tpucheck.findings import Import, ImportFacts, Reason

__all__ = ["CUDA_TEST_TWIN", "EXCEPT_TWIN", "excepted_extensions"]

EXCEPT_TWIN = "fallback.except-twin"
CUDA_TEST_TWIN = "fallback.cuda-test-twin"
MIXED = " (or a CUDA test's other side)"
_Site = tuple[str, int, str, bool]  # (path, line, the other side's call, whether a CUDA test picks it)


def excepted_extensions(
    product: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    read: Callable[[str], str | None],
    resolve: Callable[[str, Import], str | None],
    extensions: frozenset[str],
    frameworks: frozenset[str] = frozenset(),
) -> dict[str, Reason]:
    """Extension name -> why it is off the main path, for the project's own extensions
    (`extensions`: names its builds declare, never a framework's module of that name)
    whose binding's every call sits in a `try` whose handler does the job. `resolve(importer, import)` gives the project path an
    import names, or None."""
    paths = sorted(product)
    trees: dict[str, tuple[ast.Module, str]] = {}

    def tree(path: str) -> tuple[ast.Module, str] | None:
        if path not in trees:
            text = read(path) or ""
            module = parse_or_none(text)
            if module is None:
                return None
            trees[path] = (module, text)
        return trees[path]

    # the names each binding module defines around its extension: (module, name) -> extension
    exported: dict[tuple[str, str], str] = {}
    for path in paths:
        known = facts(path)
        linked = {n for imp in (known.imports if known is not None else ()) if not imp.level for n in imp.module.split(".")[-2:] if n in extensions}
        parsed = tree(path) if linked else None
        if parsed is not None:
            for name, extension in _bindings(parsed[0], frozenset(linked), frameworks).items():
                exported[(path, name)] = extension
    if not exported:
        return {}
    # one level of re-export: `from .ms_deform_attn_func import MSDeformAttnFunction` in a package
    for path in paths:
        if not path.endswith("__init__.py") or (parsed := tree(path)) is None:
            continue
        for node in parsed[0].body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    origin = resolve(path, Import(node.level, f"{node.module}.{alias.name}" if node.module else alias.name, False))
                    if origin is not None and (origin, alias.name) in exported:
                        exported.setdefault((path, alias.asname or alias.name), exported[(origin, alias.name)])
    sites: dict[str, list[_Site | None]] = {}  # extension -> each call (None: outside such a try)
    binders = {module for module, _ in exported}
    for path in paths:
        known = facts(path)
        if known is None or not any(resolve(path, imp) in binders for imp in known.imports) or (parsed := tree(path)) is None:
            continue
        names: dict[str, str] = {}  # local name -> extension
        for item in ast.walk(parsed[0]):
            if isinstance(item, ast.ImportFrom):
                for alias in item.names:
                    target = resolve(path, Import(item.level, f"{item.module}.{alias.name}" if item.module else alias.name, False))
                    if target is not None and target != path and (target, alias.name) in exported:
                        names[alias.asname or alias.name] = exported[(target, alias.name)]
            elif isinstance(item, ast.Import) and any(resolve(path, Import(0, a.name, False)) in binders for a in item.names):
                for extension in {e for (m, _), e in exported.items() if m in binders}:
                    sites.setdefault(extension, []).append(None)  # `import pkg.binding`: uses not followed
        for extension, site in _uses(parsed[0], parsed[1], names, path):
            sites.setdefault(extension, []).append(site)
    out: dict[str, Reason] = {}
    for extension, found in sorted(sites.items()):
        if found and all(site is not None for site in found):
            chosen = [site for site in found if site is not None]
            path, line, call, _ = chosen[0]
            if all(tested for *_, tested in chosen):
                out[extension] = Reason(
                    CUDA_TEST_TWIN,
                    f"every call into the `{extension}` extension's binding is on the CUDA side of a test whose other side does the job without it (`{call}` at {path}:{line}): a TPU host takes that side by itself",
                )
                continue
            out[extension] = Reason(
                EXCEPT_TWIN,
                f"every call into the `{extension}` extension's binding is in a try whose handler{MIXED if any(t for *_, t in chosen) else ''} does the job without it (`{call}` at {path}:{line}); its import must be made optional",
            )
    return out


def _bindings(module: ast.Module, extensions: frozenset[str], frameworks: frozenset[str]) -> dict[str, str]:
    """Top-level classes and functions that call into an extension (through its imported
    name), or into another such definition: name -> extension."""
    local = extension_names(module, extensions, frameworks)
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for node in module.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in found:
                used = next((local.get(n.id) or found.get(n.id) for n in ast.walk(node) if isinstance(n, ast.Name) and (n.id in local or n.id in found)), None)
                if used is not None:
                    found[node.name] = used
                    changed = True
    return found


def _uses(module: ast.Module, text: str, names: dict[str, str], path: str) -> Iterable[tuple[str, _Site | None]]:
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(module):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(module):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            yield names[node.id], _handled(node, parents, set(names), text, path)


def _handled(node: ast.AST, parents: dict[int, ast.AST], kernel_names: set[str], text: str, path: str) -> _Site | None:
    """The handler of the nearest `try` holding the use in its body that computes what the
    statement holding the use computes (the same assignment targets, or a return), by a
    call that names no binding, and does not give up (`raise`)."""
    child, parent = node, parents.get(id(node))
    statement: ast.stmt | None = None
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
        if statement is None and isinstance(child, ast.stmt):
            statement = child
        if isinstance(parent, ast.If) and statement is not None and any(child is s for s in parent.body) and _cuda_only(parent.test):
            # `if torch.cuda.is_available() and value.is_cuda: out = Op.apply(...) else:
            # out = op_pytorch(...)`: a host without CUDA takes the other side
            call = _same_job(_job(statement), parent.orelse, kernel_names)
            if call is not None:
                return path, parent.lineno, (ast.get_source_segment(text, call.func) or "").strip()[:60], True
        if isinstance(parent, ast.Try) and statement is not None and any(child is s for s in parent.body):
            for handler in parent.handlers:
                if not handler.body or isinstance(handler.body[-1], ast.Raise):
                    continue
                call = _same_job(_job(statement), handler.body, kernel_names)
                if call is not None:
                    return path, handler.lineno, (ast.get_source_segment(text, call.func) or "").strip()[:60], False
            return None
        child, parent = parent, parents.get(id(parent))
    return None


def _same_job(job: str | None, body: list[ast.stmt], kernel_names: set[str]) -> ast.Call | None:
    """The call of a statement in `body` that does `job` (the same assignment targets, or a
    return) and names no binding, or None."""
    if job is None:
        return None
    for other in body:
        call = _job_call(other)
        if call is not None and _job(other) == job and not any(isinstance(n, ast.Name) and n.id in kernel_names for n in ast.walk(other)):
            return call
    return None


def _cuda_only(test: ast.expr) -> bool:
    """A test that holds only with CUDA: `torch.cuda.is_available()`, `x.is_cuda`,
    `x.device.type == "cuda"`, or an `and` holding one. A `not`, an `or` or any other
    device's test is none."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and any(_cuda_only(v) for v in test.values)
    if isinstance(test, ast.Call):
        func = test.func
        return isinstance(func, ast.Attribute) and func.attr == "is_available" and isinstance(func.value, ast.Attribute) and func.value.attr == "cuda" and not test.args
    if isinstance(test, ast.Attribute):
        return test.attr == "is_cuda"
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        sides = (test.left, test.comparators[0])
        cuda = any(isinstance(x, ast.Constant) and isinstance(x.value, str) and (x.value == "cuda" or x.value.startswith("cuda:")) for x in sides)
        device = any(isinstance(x, ast.Attribute) and x.attr in ("type", "device") for x in sides)
        return cuda and device
    return False


def _job(statement: ast.stmt) -> str | None:
    """What a statement computes, for comparing a try's with its handler's."""
    if isinstance(statement, ast.Assign):
        return "assign " + " ".join(ast.dump(t) for t in statement.targets)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return "assign " + ast.dump(statement.target)
    if isinstance(statement, ast.Return):
        return "return"
    return None


def _job_call(statement: ast.stmt) -> ast.Call | None:
    value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)) else None
    return value if isinstance(value, ast.Call) else None
