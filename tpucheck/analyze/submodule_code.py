"""Which code of the repository's git submodules is the product's, and which is the
dependency's own, priced apart (judge/roles.py `Roles.optional`).

Why: a submodule is a dependency kept as source. What the product imports of it at load
runs in the product's process, and a source its own extension build compiles is compiled
into it: those are the product's to port. The rest (the dependency's other modules, its
kernels and builds) is the dependency's, however much CUDA it holds. Decided over the whole
project's import facts, once per scan.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from tpucheck.analyze.import_graph import ImportGraph, import_closure, module_name
from tpucheck.analyze.packages import build_paths
from tpucheck.findings import ImportFacts

__all__ = ["submodules_apart"]


def submodules_apart(
    submodules: dict[str, str],
    python: Sequence[str],
    facts: Callable[[str], ImportFacts | None],
    native: Sequence[str],
    read: Callable[[str], str | None],
) -> dict[str, tuple[str, bool, frozenset[str]]]:
    """The submodules to price apart (path -> (URL, whether the product imports it at load,
    the files in it that are the product's)). A submodule is a dependency kept as source:
    of one the product imports at load (`from models.croco import CroCoNet`, a backbone
    kept in another repository), the modules the product's imports reach run in the
    product's process, so they are the product's code, and the rest (its other modules, its
    native sources: the dependency's own build) is apart; one the product imports only
    optionally, or only builds against (C++ headers), is apart whole. A source the
    product's own extension build lists (`sources=[..., "third_party/attn/src/fwd.cu"]`) is
    compiled into the product, with the headers it includes (where a template library
    keeps its kernels): they are the product's to port, wherever they are kept."""
    built = _included(_product_build_sources(submodules, python, facts), submodules, native, read)
    apart: dict[str, tuple[str, bool, frozenset[str]]] = {}
    for folder, url in submodules.items():
        inside = [p for p in python if p.startswith(folder + "/")]
        names: set[str] = set()
        for path in inside:
            for dotted in (module_name(path), module_name(path[len(folder) + 1 :])):
                parts = dotted.split(".")
                names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        used = any(
            not imp.conditional and not imp.level and (imp.module in names or imp.module.rpartition(".")[0] in names)
            for path in python if not path.startswith(folder + "/") and (fact := facts(path)) is not None
            for imp in fact.imports
        )  # fmt: skip
        own = frozenset(p for p in built if p.startswith(folder + "/"))
        # imported at load: its modules the product's imports reach run in the product's
        # process (the product's code); the rest of it, and its native sources, stay the
        # dependency's (blind set 32: H3 imports a few plain-PyTorch modules of its
        # flash-attention submodule, whose Triton kernels and builds it never loads)
        apart[folder] = (url, used, own | _reached(folder, python, facts) if used else own)
    return apart


def _reached(folder: str, python: Sequence[str], facts: Callable[[str], ImportFacts | None]) -> frozenset[str]:
    """The Python files inside a submodule that the product's imports reach, directly or
    through the submodule's own imports (any import: one in a function runs on some path).
    The submodule's modules are named from its own top (`raster` for
    `third_party/rasterizer/raster/__init__.py`), as the product imports them."""
    prefix = folder + "/"
    names = {path: module_name(path[len(prefix) :] if path.startswith(prefix) else path) for path in sorted(python)}
    graph = ImportGraph({name: path for path, name in names.items()})
    reached = import_closure(
        [p for p in python if not p.startswith(prefix)],
        facts,
        lambda path, imp: [graph.modules[target] for target in graph.resolve(names[path], imp)],
        keep=lambda path: path.startswith(prefix),
    )
    return frozenset(p for p in reached if p.startswith(prefix))


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_MAX_INCLUDED = 5000
"""A bound on the headers followed: a template library includes a few dozen."""


def _included(sources: set[str], submodules: dict[str, str], native: Sequence[str], read: Callable[[str], str | None]) -> set[str]:
    """The built sources inside submodules, and every native file of the same submodule
    they include with `#include "..."`, followed from file to file (relative to the
    including file's folder: the form a header beside its kernels is included in)."""
    present = set(native)
    folders = [folder + "/" for folder in submodules]
    seen = {p for p in sources if p in present and p.startswith(tuple(folders))}
    todo = sorted(seen)
    while todo and len(seen) < _MAX_INCLUDED:
        path = todo.pop()
        text = read(path)
        base = path.rpartition("/")[0]
        home = next(f for f in folders if path.startswith(f))
        for name in _INCLUDE.findall(text or ""):
            target = posixpath.normpath(posixpath.join(base, name))
            if target in present and target.startswith(home) and target not in seen:
                seen.add(target)
                todo.append(target)
    return sources | seen


def _product_build_sources(submodules: dict[str, str], python: Sequence[str], facts: Callable[[str], ImportFacts | None]) -> set[str]:
    """The native sources the product's own builds list (a build file outside every
    submodule), as project paths: relative to the build file's folder or to the top."""
    sources: set[str] = set()
    for path in python:
        if any(path.startswith(folder + "/") for folder in submodules):
            continue
        fact = facts(path)
        for build in fact.builds if fact is not None else ():
            sources |= build_paths(path, build)
    return sources
