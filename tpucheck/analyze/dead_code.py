"""Code only a torch version no target runs would import: set aside, with the test.

Why: HRNet imports its vendored InPlace-ABN (a CUDA extension built just in time, its
kernels, `torch.cuda.comm` syncs) only under `if torch.__version__.startswith('0'):`,
and takes `torch.nn.SyncBatchNorm` otherwise. On torch 2.11+ that package never loads,
so none of it is work (audit AM: 23 findings judged false). Read from the import graph:
the modules the dead side of a version test imports (analyze/version_tests.py), and
what they import in turn, minus everything a live import anywhere in the tree reaches.
A folder whose every Python module is dead, or imported by nothing, is set aside whole,
so the sources of its extension go with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tpucheck.analyze.import_graph import ImportGraph, edge_closure, module_name
from tpucheck.findings import ImportFacts, Reason

__all__ = ["DEAD_VERSION", "dead_code"]

DEAD_VERSION = "set-aside.dead-version"


def dead_code(python: Sequence[str], facts: Callable[[str], ImportFacts | None]) -> dict[str, Reason]:
    """Path (a module, or a folder that holds only dead code) -> why no target runs it."""
    paths = sorted(python)
    known = {p: f for p in paths if (f := facts(p)) is not None}
    if not any(f.dead for f in known.values()):
        return {}
    names = {p: module_name(p) for p in paths}
    graph = ImportGraph({name: path for path, name in names.items()})

    def targets(path: str, fact: ImportFacts, dead: bool) -> set[str]:
        found = {graph.modules[t] for imp in (fact.dead if dead else fact.imports) for t in graph.resolve(names[path], imp)}
        found.discard(path)
        return found

    live = {p: targets(p, f, False) for p, f in known.items()}
    seeds: dict[str, str] = {}  # module a dead import names -> the test's evidence
    deciders: set[str] = set()  # the modules holding those tests
    for path, fact in known.items():
        for imp in fact.dead:
            for target in graph.resolve(names[path], imp):
                line, _, rest = imp.dead.partition("\t")
                test, _, false = rest.partition("\t")
                seeds.setdefault(graph.modules[target], f"{test} at {path}:{line} ({false})")
                deciders.add(path)
    reached = edge_closure(seeds, live)
    importers: dict[str, set[str]] = {}
    for path, found in live.items():
        for target in found:
            importers.setdefault(target, set()).add(path)
    alive = edge_closure([p for p in reached if importers.get(p, set()) - reached], live) & reached
    dead = reached - alive
    if not dead:
        return {}
    why = {path: _reason(path, seeds, importers, dead) for path in sorted(dead)}
    out: dict[str, Reason] = dict(why)
    imported = set(importers)
    for path in sorted(dead):
        folder = path.rpartition("/")[0]
        best = ""
        while folder and all(p in dead or p not in imported for p in paths if p.startswith(folder + "/")) and not any(
            decider.startswith(folder + "/") for decider in deciders
        ):
            best = folder
            folder = folder.rpartition("/")[0]
        if best and best not in out:
            out[best] = why[path]
    return out


def _reason(path: str, seeds: dict[str, str], importers: dict[str, set[str]], dead: set[str]) -> Reason:
    evidence = seeds.get(path)
    if evidence is None:  # reached from a seed through live imports: name the seed's test
        evidence = next((seeds[s] for s in sorted(seeds) if s in dead), "a version test no target passes")
    return Reason(DEAD_VERSION, f"imported only under {evidence}: no target torch runs it")

