"""Subpackages nothing else in the product loads: opt-in components of a library.

Why: a library's core is what its modules load one another for; a subpackage that no
product module outside it imports, names or loads lazily is a component its users import
by name (`from nni.compression.quantization_speedup import ModelSpeedupTensorRT`,
`allennlp.modules.vision`'s Faster R-CNN region detector). A CUDA-only package or a kernel
inside one stops the users of that component, not the library: blind set 60 banded NNI and
AllenNLP B, and tpucheck capped both at D for a TensorRT integration and a torchvision
detector nothing else touches.

Read from the import graph and the project's text, never from names: a subpackage (a
folder with `__init__.py` inside another package) is opt-in when no product module outside
it imports one of its modules, when no product or config text outside it names its dotted
path (`_target_: pkg.sub.Cls`, `import_module("pkg.sub")`), when its parent package does not
name it as a string (a lazy `_import_structure = {"sub": [...]}`) nor load its children by
computed name (`f"pkg.{name}"`), and when none of its files is an entry point or a file
the launch scripts run. Tests, docs and examples importing it do not make it core. A
subpackage holding half the product's modules or more is its core, not a component.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Container, Iterable, Sequence

from tpucheck.analyze.import_graph import ImportGraph, module_name
from tpucheck.discover.walk import NATIVE_EXTENSIONS
from tpucheck.findings import ImportFacts

__all__ = ["COMPUTED_IMPORT", "OPT_IN", "opt_in_components", "package_name"]

OPT_IN = "severity.opt-in-component"


def opt_in_components(
    product_python: Sequence[str],
    facts: Callable[[str], ImportFacts | None],
    files: Iterable[str],
    texts: Iterable[str],
    read: Callable[[str], str | None],
    exempt: Container[str],
) -> dict[str, str]:
    """Each file (Python or other, not native sources) under an opt-in subpackage -> its
    dotted name. `texts` are the files whose text may name a subpackage (the product's
    Python and the configs); `exempt` the entry points and launched files."""
    product = sorted(product_python)
    inits = {p.rpartition("/")[0] for p in product if posixpath.basename(p) == "__init__.py" and "/" in p}
    packages = {d for d in inits if posixpath.dirname(d) in inits}
    if not packages:
        return {}
    graph = ImportGraph({module_name(p): p for p in product})
    tails: dict[str, set[str]] = {}  # `syncbn.functional` -> the subpackages it ends
    for d in packages:
        tails.setdefault(".".join(d.split("/")[-2:]), set()).add(d)
    used: set[str] = set()
    for path in product:
        fact = facts(path)
        for imp in fact.imports if fact is not None else ():
            targets = graph.resolve(module_name(path), imp)
            if targets:
                used.update(_holding(graph.modules[targets[0]], packages) - _holding(path, packages))
            elif not imp.level:
                # `from isegm.model.syncbn.functional import f` in a copied package: an import
                # by another root that ends in a subpackage's path may be that subpackage
                parts = imp.module.split(".")
                for n in range(len(parts) - 1):
                    used.update(d for d in tails.get(".".join(parts[n : n + 2]), ()) if not path.startswith(d + "/"))
    used.update(d for d in packages for p in product if p in exempt and p.startswith(d + "/"))
    candidates = sorted(packages - used)
    if not candidates:
        return {}
    dotted = {d: package_name(d, inits) for d in candidates}
    named = _named(candidates, dotted, texts, read)
    # a component is a part: one holding half the product's modules or more is its core
    half = len(product) / 2
    opt_in = [d for d in candidates if d not in named and not any(d.startswith(u + "/") for u in named) and sum(p.startswith(d + "/") for p in product) < half]
    out: dict[str, str] = {}
    for path in sorted(files):
        if path.endswith(NATIVE_EXTENSIONS):
            continue  # an extension built from these loads by its own name, from anywhere
        holding = [d for d in opt_in if path.startswith(d + "/")]
        if holding:
            out[path] = dotted[max(holding, key=len)]  # the innermost: the component itself
    return out


def _holding(path: str, packages: set[str]) -> set[str]:
    """The subpackages a file sits in."""
    found = set()
    folder = posixpath.dirname(path)
    while folder:
        if folder in packages:
            found.add(folder)
        folder = posixpath.dirname(folder)
    return found


def _named(candidates: list[str], dotted: dict[str, str], texts: Iterable[str], read: Callable[[str], str | None]) -> set[str]:
    """Candidates some text outside them names: by dotted path, as a string its parent's
    `__init__` holds, or by a computed name its parent's dotted path begins."""
    by_name = re.compile(r"(?<![\w.])(" + "|".join(re.escape(dotted[d]) for d in sorted(candidates, key=len, reverse=True)) + r")(?![\w])")
    found: set[str] = set()
    folders = {dotted[d]: d for d in candidates}
    parents = {posixpath.dirname(d): d for d in candidates}
    for path in texts:
        text = read(path) or ""
        for m in by_name.finditer(text):
            folder = folders[m.group(1)]
            if not path.startswith(folder + "/"):
                found.add(folder)
        folder = posixpath.dirname(path)
        if posixpath.basename(path) == "__init__.py":
            for d in candidates:
                if posixpath.dirname(d) == folder and re.search(r"""["']""" + re.escape(posixpath.basename(d)) + r"""["']""", text):
                    found.add(d)  # a lazy loader's table
        for parent, child in parents.items():
            prefix = dotted[child].rpartition(".")[0] + "."
            computed = (f'f"{prefix}{{', f"f'{prefix}{{", f'"{prefix}"', f"'{prefix}'")
            if any(c in text for c in computed) or (folder == parent and COMPUTED_IMPORT.search(text)):
                found.update(d for d in candidates if posixpath.dirname(d) == parent)
    return found


COMPUTED_IMPORT = re.compile(r"""(?:import_module|__import__)\(\s*(?![rbu]?["'][\w.]*["']\s*[,)])""")
"""A module of the parent package loading modules by a computed name (`import_module(f".{name}",
__package__)`): any child may be one."""


def package_name(folder: str, inits: set[str]) -> str:
    """A package folder's import name: from its outermost package down (`src/pkg/sub` ->
    `pkg.sub` when `src` holds no `__init__.py`)."""
    top = folder
    while posixpath.dirname(top) in inits:
        top = posixpath.dirname(top)
    base = posixpath.dirname(top)
    return (folder[len(base) + 1 :] if base else folder).replace("/", ".")
