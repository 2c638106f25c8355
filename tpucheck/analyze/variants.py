"""Variant entry points: a script that applies something, then runs another script's main
function, and what only it imports.

Why: LLM training repositories ship `train_mem.py` beside `train.py` (FastChat's pattern,
copied by LLaVA and its kin): it imports a module that monkey-patches attention with
flash-attn, applies it, then calls `train()` from `train.py`, which is runnable on its own
(`if __name__ == "__main__": train()`). The product's training runs either way; the patch
is an option the user picks by the script they launch (blind set 35: Video-ChatGPT, banded
B with the flash-attn patch read as optional, graded D for it). Recognised by what the code
does, never by file names: the variant calls, from its own main block or its top level, a
function imported from another project module whose own main block calls the same
function. The project modules the variant imports that the other script's imports never
reach are the variant's options: optional, with the evidence.

Read with `ast`, only for product files with a main block.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from tpucheck.analyze.import_graph import import_closure
from tpucheck.analyze.pyparse import is_main_test, parse_or_none
from tpucheck.findings import Import, ImportFacts, Reason

__all__ = ["VARIANT", "variant_options"]

VARIANT = "alternative.entry-variant"


def variant_options(
    product: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    read: Callable[[str], str | None],
    resolve: Callable[[str, Import], str | None],
    launched: Iterable[str] = (),
) -> dict[str, Reason]:
    """Module path -> why it is an option of a variant entry point. A variant the
    project's own launch scripts run is how the product runs (ml-ferret's training
    scripts launch `train_mem.py`): its imports are the main path."""
    paths = sorted(product)
    run = set(launched)
    # what a launched script imports itself is the main path, whatever variant imports it
    # too (blind set 81: LITA's scripts launch `lita/train/train_mem.py`, which applies the
    # flash-attn patch that LLaVA's own `train_mem.py` variant also imports)
    launched_imports = {
        module
        for path in paths if path in run and (fact := facts(path)) is not None
        for imp in fact.imports if (module := resolve(path, imp)) is not None
    }  # fmt: skip
    out: dict[str, Reason] = {}
    for path in paths:
        if path in run:
            continue
        text = read(path) or ""
        if "__main__" not in text:
            continue
        tree = parse_or_none(text)
        known = facts(path)
        if tree is None or known is None:
            continue
        imported = _imported_functions(tree)
        for called in _main_calls(tree):
            source = imported.get(called)
            if source is None:
                continue
            target = resolve(path, source)
            if target is None or target == path or called not in _main_calls(parse_or_none(read(target) or "")):
                continue
            reached = import_closure([target], facts, lambda importer, imp: [m] if (m := resolve(importer, imp)) is not None else [])
            for imp in known.imports:
                module = resolve(path, imp)
                if module is not None and module not in reached and module != path and module not in launched_imports:
                    out.setdefault(
                        module,
                        Reason(VARIANT, f"{module} is imported by {path}, which runs `{called}()` of {target} after it; {target} runs it alone"),
                    )
    return out


def _imported_functions(tree: ast.Module) -> dict[str, Import]:
    """Names bound by the module's top-level `from X import f`, as imports to resolve."""
    out: dict[str, Import] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = Import(node.level, f"{node.module}.{alias.name}", False, True)
    return out


def _main_calls(tree: ast.Module | None) -> set[str]:
    """Names called bare in the module's `if __name__ == "__main__":` block."""
    calls: set[str] = set()
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.If) and is_main_test(node.test):
            for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                    calls.add(inner.func.id)
    return calls
