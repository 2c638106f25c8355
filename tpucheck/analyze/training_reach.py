"""Modules only the product's non-training scripts reach: what a backward pass alone meets
(weight_norm's missing backward, a loss scaler) is not on their path.

Why: a product that trains somewhere often keeps code no training step ever runs. Bert-
VITS2 keeps copies of its older models so `webui.py` can load old checkpoints, and
export-only copies for ONNX; `train_ms.py` trains the newest copy only (audit AK: 12 of
13 wrong blockers were weight_norm in such copies). The product-wide reading (`trains`:
any training step anywhere) puts them all on the training path.

Recognised by the import graph, never by names: the roots are the product modules no
other product module imports. A root trains when it reaches a module that shows a
training step (rules/judgement.yaml `workloads.training`). A module is untrained when
something imports it, and every root that reaches it is a script (a main block, or run by
the project's launch scripts or manifests) that trains nothing. A root that is no script
(a package's `__init__.py`, a library module) is kept as one that may train: a library's
users import its trainer and its models apart (the trainer takes the model it is given).
A module nothing imports is judged by what it does, as audits do. And when any module on
a training path imports by name at run time (`importlib.import_module`), the graph cannot
say what trains: nothing is untrained.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tpucheck.analyze.import_graph import ImportGraph, edge_closure, module_name
from tpucheck.findings import ImportFacts

__all__ = ["MAIN_BLOCK", "untrained_modules"]

MAIN_BLOCK = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.MULTILINE)
"""A module-level main block: the module runs as a script."""
_DYNAMIC = re.compile(r"\bimport_module\s*\(|\b__import__\s*\(")


def untrained_modules(
    product: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    read: Callable[[str], str | None],
    run: Iterable[str] = (),
) -> dict[str, str]:
    """Product module -> the non-training scripts that alone reach it (for the finding's
    reason). `run`: modules the project's launch scripts or manifests run (scripts even
    without a main block). Empty when the product shows no training step: the product-wide
    reading already covers it."""
    paths = sorted(product)
    trains = {p for p in paths if (known := facts(p)) is not None and "training" in known.workloads}
    if not trains:
        return {}
    names = {path: module_name(path) for path in paths}
    graph = ImportGraph({name: path for path, name in names.items()})
    edges: dict[str, set[str]] = {}
    for path in paths:
        known = facts(path)
        targets = {graph.modules[t] for imp in (known.imports if known is not None else ()) for t in graph.resolve(names[path], imp)}
        targets.discard(path)
        edges[path] = targets
    imported = set().union(*edges.values()) if edges else set()
    roots = [p for p in paths if p not in imported]

    reach = {root: edge_closure([root], edges) for root in roots}
    training_roots = [r for r in roots if reach[r] & trains]
    on_training = set().union(*(reach[r] for r in training_roots)) if training_roots else set()
    if any(_DYNAMIC.search(read(p) or "") for p in sorted(on_training)):
        return {}
    launched = set(run)
    scripts = {r for r in roots if r in launched or MAIN_BLOCK.search(read(r) or "")}
    kept = set(on_training)
    for root in roots:
        if root not in scripts:
            kept |= reach[root]
    out: dict[str, str] = {}
    for root in sorted(scripts - set(training_roots)):
        for path in sorted(reach[root] - {root}):
            if path in imported and path not in kept:
                out[path] = f"{out[path]}, `{root}`" if path in out and out[path].count("`") < 6 else out.get(path, f"`{root}`")
    return out
