"""Packages copied from another project into this one (a vendored SyncBN under a GUI's
folder, still importing itself as `isegm.model.syncbn`): a library copy has no entry points
of its own, so its modules that nothing imports are off the main path
(rules/judgement.yaml `vendored_copies`)."""

from __future__ import annotations

from collections.abc import Callable

from tpucheck.analyze.import_graph import ImportGraph
from tpucheck.analyze.packages import package_folder
from tpucheck.findings import Import, ImportFacts, Reason
from tpucheck.ruleset.judgement import VENDORED_COPY

__all__ = ["copy_of", "in_unimported_copy", "vendored_copies"]


def vendored_copies(
    graph: ImportGraph, facts: Callable[[str], ImportFacts | None], edges: dict[str, list[tuple[str, bool]]], imported: set[str]
) -> dict[str, Reason]:
    """Packages copied from another project, by their imports of themselves under that
    project's name: in `app/fbrs/model/syncbn/nn.py`, `from isegm.model.syncbn.functional
    import f` names a package the repository does not have, whose tail
    (`model.syncbn.functional`) is a module of the importer's own tree, so `app.fbrs` is a
    copy of `isegm`. Only when no module outside the copy imports `isegm` (then it is a
    package the product installs: `transformers.models.llama.modeling_llama` beside a
    project's own `models/llama/modeling_llama.py`), and never the project's top package.
    The import is an edge to that module (the copy's own wiring); the copy's root -> the
    evidence its unimported modules carry."""
    candidates: list[tuple[str, str, str, str, Import]] = []  # (root, head, importer, target, import)
    heads: dict[str, set[str]] = {}  # head of an outside import -> importers
    for dotted, path in graph.modules.items():
        known = facts(path)
        for imp in known.imports if known is not None else ():
            if imp.level or graph.resolve(dotted, imp):
                continue
            head = imp.module.partition(".")[0]
            heads.setdefault(head, set()).add(dotted)
            found = _own_tail(graph, dotted, imp.module) or _own_tail(graph, dotted, imp.module.rpartition(".")[0])
            if found is not None and "." in found[0]:
                candidates.append((found[0], head, dotted, found[1], imp))
    roots: dict[str, Reason] = {}
    for root, head, dotted, target, imp in candidates:
        if any(m != root and not m.startswith(root + ".") for m in heads[head]):
            continue
        edges[dotted].append((target, imp.conditional))
        if not dotted.startswith(target + "."):
            imported.add(target)
        roots.setdefault(root, Reason(VENDORED_COPY, f"a copy of `{head}` ({graph.modules[dotted]} imports `{imp.module}`) that nothing in the product imports"))
    return roots


def _own_tail(graph: ImportGraph, importer: str, name: str) -> tuple[str, str] | None:
    """(copy root, module) when `name` without its head is the one module of the
    importer's own tree that ends so (`isegm.model.syncbn` in `app.fbrs.model.x`:
    `app.fbrs`, `app.fbrs.model.syncbn`)."""
    tail = name.partition(".")[2]
    own = [t for t in graph.by_suffix.get(tail, []) if importer.startswith(t[: -len(tail)])] if "." in tail else []
    return (own[0][: -len(tail) - 1], own[0]) if len(own) == 1 else None


def in_unimported_copy(path: str, packages: set[str], evidence: dict[str, Reason], rules: tuple[str, ...] = (VENDORED_COPY,)) -> Reason | None:
    """A native source whose nearest package folder is a module of a copied package that
    nothing imports (`functional/csrc/cuda/bn.cu` under `functional/__init__.py`): it is
    built by that package, if at all. With other `rules`, the package's evidence of that
    kind (one the product only imports under a try or an if)."""
    folder = package_folder(path, packages)
    if not folder:
        return None
    reason = evidence.get(f"{folder}/__init__.py") or evidence.get(f"{folder}/__init__.pyi")
    return reason if reason is not None and reason.rule in rules else None


def copy_of(dotted: str, copies: dict[str, Reason]) -> Reason | None:
    return next((reason for root, reason in copies.items() if dotted == root or dotted.startswith(root + ".")), None)
