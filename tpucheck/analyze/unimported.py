"""Package modules nothing the product runs reaches: off its path.

Why: a module inside a package that no script, entry point, launched file or package
`__init__` reaches through imports, and that no product or config text names, runs only
when someone imports it by hand. Its blockers stop that user, not the product: audits AV
and AX judged a cupy NCCL rendezvous helper that only a test imports (simpleRL-reason's
`ray_backend.py`) and an SSD box decoder only a test calls (sparseml's `ssd_helpers.py`)
major, not blockers. `opt_in.py` reads the same for whole subpackages.

Read from the import graph and the text, never from names. The anchors are what runs
or is loaded by itself: modules outside any package (scripts, top-level modules), every
package `__init__.py` and `__main__.py`, modules with a main block, entry points and files
the launch scripts run, and modules some text outside them names by dotted path (a Hydra
`_target_`, `import_module("pkg.mod")`), that their parent `__init__` names as a string
(a lazy loader's table), or whose folder loads modules by a computed name. What the
anchors import, transitively, is reached. A library whose users import its leaf modules
directly (most of its package modules reached by nothing) is read as such: nothing of
it is set apart.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Container, Iterable, Sequence

from tpucheck.analyze.import_graph import ImportGraph, edge_closure, module_name
from tpucheck.analyze.opt_in import COMPUTED_IMPORT, package_name
from tpucheck.analyze.training_reach import MAIN_BLOCK
from tpucheck.findings import ImportFacts

__all__ = ["UNIMPORTED", "unimported_modules"]

UNIMPORTED = "severity.unimported-module"

_COMPUTED_IMPORT = re.compile(COMPUTED_IMPORT.pattern + r"|\biter_modules\(|\bwalk_packages\(")
"""A module loading others by a computed name (`import_module(f".{name}")`) or walking a
package's folder: any module of its folder may be one."""
_SHARE = 0.5
"""Package modules reached by nothing in this share or more: a library of leaf modules its
users import one by one, not dead code beside a core."""


def unimported_modules(
    product_python: Sequence[str],
    facts: Callable[[str], ImportFacts | None],
    texts: Iterable[str],
    read: Callable[[str], str | None],
    exempt: Container[str],
) -> dict[str, str]:
    """Package module (path) -> its dotted name, for the modules nothing run reaches."""
    product = sorted(product_python)
    # a root `__init__.py` makes no package of the tree itself: its modules are scripts
    inits = {posixpath.dirname(p) for p in product if posixpath.basename(p) == "__init__.py" and "/" in p}
    leaves = [p for p in product if posixpath.dirname(p) in inits and posixpath.basename(p) not in ("__init__.py", "__main__.py") and p not in exempt]
    if not leaves:
        return {}
    graph = ImportGraph({module_name(p): p for p in product})
    edges: dict[str, set[str]] = {}
    for path in product:
        fact = facts(path)
        edges[path] = {graph.modules[t] for imp in (fact.imports if fact is not None else ()) for t in graph.resolve(module_name(path), imp)}
    leaf_set = set(leaves)
    anchors = [p for p in product if p not in leaf_set]
    anchors += [p for p in leaves if MAIN_BLOCK.search(read(p) or "")]
    reached = edge_closure(anchors, edges)
    candidates = [p for p in leaves if p not in reached]
    if not candidates or len(candidates) >= _SHARE * len(leaves):
        return {}
    dotted = {p: _dotted(p, inits) for p in candidates}
    named = _named(candidates, dotted, texts, read)
    if named:
        reached = edge_closure([*anchors, *named], edges)
        candidates = [p for p in candidates if p not in reached]
    return {p: dotted[p] for p in candidates}


def _named(candidates: list[str], dotted: dict[str, str], texts: Iterable[str], read: Callable[[str], str | None]) -> set[str]:
    """Candidates some text outside them names by dotted path, that their parent's
    `__init__` names as a string, or whose folder another module loads by computed name."""
    by_name = re.compile(r"(?<![\w.])(" + "|".join(re.escape(dotted[p]) for p in sorted(candidates, key=lambda p: len(dotted[p]), reverse=True)) + r")(?![\w])")
    paths = {dotted[p]: p for p in candidates}
    stems = {p: posixpath.splitext(posixpath.basename(p))[0] for p in candidates}
    folders: dict[str, list[str]] = {}
    for p in candidates:
        folders.setdefault(posixpath.dirname(p), []).append(p)
    found: set[str] = set()
    unreached = set(candidates)
    for path in texts:
        if path in unreached:
            continue  # what an unreached module names (its own imports) is reached by nothing yet
        text = read(path) or ""
        found.update(paths[m.group(1)] for m in by_name.finditer(text))
        folder = posixpath.dirname(path)
        here = folders.get(folder, ())
        if not here:
            continue
        if posixpath.basename(path) == "__init__.py":
            found.update(p for p in here if re.search(r"""["']""" + re.escape(stems[p]) + r"""["']""", text))
        if _COMPUTED_IMPORT.search(text):
            found.update(here)
    return found


def _dotted(path: str, inits: set[str]) -> str:
    """A package module's import name: its package's, then its stem."""
    return f"{package_name(posixpath.dirname(path), inits)}.{posixpath.splitext(posixpath.basename(path))[0]}"
