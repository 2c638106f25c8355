"""The project's own modules as an import graph's nodes: which module an import statement
names (relative, beside the importer, from the top, or by the tail of a deeper name).
Kept apart from the verdicts drawn on the graph (analyze/reachability.py, analyze/copies.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from tpucheck.findings import Import, ImportFacts

__all__ = ["ImportGraph", "bound_names", "by_dotted_path", "import_closure", "module_name"]


def module_name(path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`."""
    stem = path[: -len(".pyi")] if path.endswith(".pyi") else path[: -len(".py")]
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def bound_names(paths: Iterable[str], facts: Callable[[str], ImportFacts | None]) -> dict[str, frozenset[str]]:
    """Package -> the names its `__init__.py` binds by importing them from a module
    (`from .upfirdn2d import upfirdn2d` binds `upfirdn2d`; `from . import upfirdn2d` binds
    the submodule itself and does not count). Audit AT (ml-gsn): `from .op import
    upfirdn2d` took the function its `__init__` imports under a try with a native fallback,
    not the submodule that builds the CUDA kernels."""
    out: dict[str, frozenset[str]] = {}
    for path in paths:
        if not path.endswith("/__init__.py") or (known := facts(path)) is None:
            continue
        names = frozenset(imp.module.rpartition(".")[2] for imp in known.imports if imp.level and "." in imp.module)
        if names:
            out[module_name(path)] = names
    return out


class ImportGraph:
    """The project's modules by dotted name, and how an import names them: relative,
    beside the importer, from the top, or by the tail of a deeper module's name."""


    def __init__(self, modules: dict[str, str], bound: Mapping[str, frozenset[str]] | None = None) -> None:
        self.modules = modules  # dotted name -> path
        self.bound = bound or {}
        """Package -> names its `__init__` binds from a module of its own (`from .upfirdn2d
        import upfirdn2d`): `from pkg import upfirdn2d` takes that name, not the submodule."""
        self._absolute: dict[tuple[str, str], list[str]] = {}  # (importer's folder, module) -> targets
        self._packages: dict[str, list[str]] = {}
        self._global: dict[str, list[str]] = {}  # absolute module name -> targets, folder aside
        self.by_suffix: dict[str, list[str]] = {}
        for dotted in modules:
            parts = dotted.split(".")
            for start in range(1, len(parts) - 1):
                self.by_suffix.setdefault(".".join(parts[start:]), []).append(dotted)

    def resolve(self, importer: str, imp: Import) -> list[str]:
        """Project modules the import runs (the target and its packages), or [] for a
        module from outside the project."""
        name = imp.module
        if not imp.level:  # the same for every module of a folder: asked once per folder
            folder = self.modules.get(importer, "").rpartition("/")[0].replace("/", ".")
            known = self._absolute.get((folder, name))
            if known is None:
                known = self._absolute[(folder, name)] = self._resolve(folder, imp)
            return known
        return self._resolve("", imp, importer)

    def _resolve(self, folder: str, imp: Import, importer: str = "") -> list[str]:
        name = imp.module
        if imp.level:
            package = importer.split(".")
            is_package = self.modules.get(importer, "").endswith("__init__.py")
            package = package if is_package else package[:-1]
            if imp.level - 1 > len(package):
                return []
            package = package[: len(package) - (imp.level - 1)]
            name = ".".join([*package, name]) if name else ".".join(package)
            return self._first((name, name.rpartition(".")[0]), relative=True)
        if folder:
            # A module beside the importer (`import kernels` from a script's folder, or
            # after `sys.path.append(dirname(__file__))`) shadows anything installed.
            beside = self._first((f"{folder}.{name}", f"{folder}.{name.rpartition('.')[0]}" if "." in name else ""), relative=False)
            if beside:
                return beside
        known = self._global.get(name)
        if known is None:  # the same for every importer: asked once per name
            known = self._global[name] = self._first((name, name.rpartition(".")[0]), relative=False)
        return known

    def _first(self, candidates: tuple[str, str], *, relative: bool) -> list[str]:
        """The first candidate that is a project module (an absolute one may also be the
        tail of a deeper module's name, when at most three modules end so)."""
        for index, candidate in enumerate(candidates):
            if not candidate:
                continue
            if candidate in self.modules:
                package, _, last = candidate.rpartition(".")
                if index == 0 and last in self.bound.get(package, ()):
                    return self._with_packages(package)  # `from pkg import name`: the package's own name
                return self._with_packages(candidate)
            if not relative and "." in candidate:
                found = self.by_suffix.get(candidate, [])
                if 0 < len(found) <= 3:
                    return [p for f in found for p in self._with_packages(f)]
        return []

    def _with_packages(self, dotted: str) -> list[str]:
        found = self._packages.get(dotted)
        if found is None:
            parts = dotted.split(".")
            found = self._packages[dotted] = [".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in self.modules]
        return found


def by_dotted_path(module: str, target: str) -> bool:
    """Whether an absolute import names `target` by a dotted path of its own (`from
    rpe_ops.rpe_index import F` for `iRPE/DeiT/rpe_ops/rpe_index.py`, a folder on the
    path with no `__init__.py`: a namespace package the product imports, not a script)."""
    if module == target or module.startswith(target + "."):
        return True
    named = next((m for m in (module, module.rpartition(".")[0]) if target == m or target.endswith("." + m)), "")
    return "." in named


def import_closure(
    starts: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    targets: Callable[[str, Import], Iterable[str]],
    keep: Callable[[str], bool] = lambda _: True,
) -> set[str]:
    """The files `starts` reach through their imports (any import: one in a function runs
    on some path), walking only into files `keep` accepts; the starts included. `targets`
    names the files an import in a file reaches."""
    seen = set(starts)
    stack = sorted(seen)
    while stack:
        path = stack.pop()
        known = facts(path)
        for imp in known.imports if known is not None else ():
            for found in targets(path, imp):
                if found not in seen and keep(found):
                    seen.add(found)
                    stack.append(found)
    return seen


def edge_closure(starts: Iterable[str], edges: Mapping[str, Iterable[str]]) -> set[str]:
    """What `starts` reach through edges already resolved (module -> the modules it
    imports), the starts included."""
    seen = set(starts)
    stack = sorted(seen)
    while stack:
        for found in edges.get(stack.pop(), ()):
            if found not in seen:
                seen.add(found)
                stack.append(found)
    return seen
