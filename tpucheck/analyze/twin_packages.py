"""Twin packages: a subpackage that re-exports a public name its parent package already
exports from a module outside it, and that no module of the library imports (a script
outside every package may: it picks a build by one import line, as a user does).

Why: a library that ships a second build of its model for one kind of hardware
(`pkg.triton` exporting `PaLM` beside `pkg` exporting `PaLM` from plain PyTorch) lets the
user pick one by the import they write; the product's own code, entry points and package
root use the other. The subpackage's kernels are that alternative's, not the main path's
(audit AE: PaLM-pytorch's Triton build, five kernels judged blockers, the auditor's major).
Recognised by what the packages bind and import, never by the folder's name.
"""

from __future__ import annotations

from collections.abc import Callable

from tpucheck.analyze.import_graph import ImportGraph
from tpucheck.findings import ImportFacts, Reason

TWIN_PACKAGE = "alternative.twin-package"


def twin_packages(graph: ImportGraph, facts: Callable[[str], ImportFacts | None], edges: dict[str, list[tuple[str, bool]]]) -> dict[str, Reason]:
    """Path of every module of a twin package -> the evidence."""
    packages = sorted(dotted for dotted, path in graph.modules.items() if path.endswith(("/__init__.py", "/__init__.pyi")))
    exports = {package: _exports(graph, facts, package) for package in packages}
    folders = frozenset(graph.modules[p].rpartition("/")[0] for p in packages)
    out: dict[str, Reason] = {}
    for twin in packages:
        shared = _shared_name(twin, exports, packages)
        if shared is None or _imported_by_the_library(twin, edges, graph, folders):
            continue
        name, ancestor, source = shared
        folder = graph.modules[twin].rpartition("/")[0]
        reason = Reason(
            TWIN_PACKAGE,
            f"{folder}/ exports `{name}` as {graph.modules[ancestor]} does from {graph.modules.get(source, source)}, and no module of the library imports it: an alternative build a user or a script picks by import",
        )
        for dotted, path in graph.modules.items():
            if _inside(dotted, twin):
                out.setdefault(path, reason)
    return out


def _exports(graph: ImportGraph, facts: Callable[[str], ImportFacts | None], package: str) -> dict[str, str]:
    """Public names a package's `__init__` binds from its project's modules at its top
    (`from .palm import PaLM`) -> the module each comes from."""
    known = facts(graph.modules[package])
    out: dict[str, str] = {}
    for imp in known.imports if known is not None else ():
        name = imp.module.rpartition(".")[2]
        if not imp.top or name.startswith("_") or "." not in imp.module:
            continue
        targets = graph.resolve(package, imp)
        if targets and not targets[0].endswith("." + name):  # a name from a module, not a module
            out.setdefault(name, targets[0])
    return out


def _shared_name(twin: str, exports: dict[str, dict[str, str]], packages: list[str]) -> tuple[str, str, str] | None:
    """A name the twin exports from inside itself that an enclosing package exports from
    outside the twin: (name, that package, its source)."""
    for ancestor in packages:
        if not twin.startswith(ancestor + "."):
            continue
        for name, source in sorted(exports[twin].items()):
            theirs = exports[ancestor].get(name)
            if _inside(source, twin) and theirs is not None and not _inside(theirs, twin):
                return name, ancestor, theirs
    return None


def _imported_by_the_library(twin: str, edges: dict[str, list[tuple[str, bool]]], graph: ImportGraph, folders: frozenset[str]) -> bool:
    """Whether a module of a package outside the twin imports it: then the library itself
    runs on it. A script outside every package (`train.py` importing `pkg.triton`) picks a
    build by one import line, as a user does (audit AE: PaLM's enwik8 `train.py`).
    `folders`: the folders of the project's packages."""
    return any(
        not _inside(importer, twin) and graph.modules[importer].rpartition("/")[0] in folders and any(_inside(target, twin) for target, _ in sites)
        for importer, sites in edges.items()
    )


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")
