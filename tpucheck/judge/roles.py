"""Where a file sits in a project, which decides how much its findings block a migration.

Library and training code must run on the TPU for the product to; tests, examples,
benchmarks and docs still need porting but do not stop the product from running. The
conventions are data (rules/judgement.yaml `roles`), each with why; a module the project
exposes as a command is product whatever its folder (judge/entrypoints.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from tpucheck.discover.walk import NATIVE_EXTENSIONS
from tpucheck.findings import Reason
from tpucheck.ruleset.judgement import Judgement, PathRole

SUPPORTING_ROLES = frozenset({"test", "example", "benchmark", "docs"})
PRODUCT_ROLES = frozenset({"library", "script"})


class Roles:
    """A file's role from the judgement's path conventions and the project's entry points."""

    def __init__(
        self,
        judgement: Judgement,
        entry_points: Iterable[str] = (),
        submodules: Mapping[str, tuple[str, bool, frozenset[str]]] | None = None,
        launched: Mapping[str, str] | None = None,
        nested: Mapping[str, str] | None = None,
        imported: Mapping[str, str] | None = None,
        scripts: Mapping[str, str] | None = None,
        sole: Mapping[str, str] | None = None,
    ) -> None:
        self.judgement = judgement
        self.sole = dict(sole or {})
        """Example files of a project that holds no other code -> the evidence: the demo is
        what the project ships (a model release with a web demo), so it is the product."""
        self.entry_points = frozenset(entry_points)
        self.launched = dict(launched or {})
        """Python files the project's launch scripts run -> the first such script
        (judge/entrypoints.py `launched_paths`): product code, as entry points are."""
        self.scripts = dict(scripts or {})
        """`test.py` files that hold no test -> the evidence (judge/entrypoints.py
        `test_named_scripts`): scripts, product code."""
        self.imported = dict(imported or {})
        """Python files product code imports -> the first such importer (reachability
        `imported_by`): a file only its name calls a test or demo is product when the
        product imports it."""
        self.nested = dict(nested or {})
        """Folders holding another project (its own manifest) the product neither imports
        nor runs -> that manifest (judge/entrypoints.py `nested_projects`): priced apart."""
        self.submodules = dict(submodules or {})
        """Git submodule path -> (URL, whether the product imports it at load, its files that
        are the product's): other repositories pinned inside this one, priced apart but for
        those files (TreeFacts.submodules)."""
        """Paths of modules the project exposes as commands (console_scripts, `__main__.py`)."""
        self._placed: dict[str, tuple[str, Reason | None]] = {}
        """Memo: a scan asks each path's role many times (reachability, placement, scoring)."""

    def path_role(self, path: str) -> PathRole | None:
        for entry in self.judgement.roles:
            if any(pattern.search(path) for pattern in entry.paths):
                return entry
        return None

    def role_of(self, path: str) -> str:
        return self.placed(path)[0]

    def placed(self, path: str) -> tuple[str, Reason | None]:
        """The role and, when it is not plain library code, the evidence for it."""
        known = self._placed.get(path)
        if known is None:
            known = self._placed[path] = self._place(path)
        return known

    def _place(self, path: str) -> tuple[str, Reason | None]:
        entry = self.path_role(path)
        if path in self.entry_points and (entry is None or entry.role not in PRODUCT_ROLES):
            return "script", Reason("role.entry-point", f"{path} is a command the project exposes")
        launcher = self.launched.get(path)
        if launcher is not None and entry is not None and entry.role not in PRODUCT_ROLES:  # a name or folder said supporting
            return "script", Reason("role.launched", f"{path} is run by {launcher}")
        script = self.scripts.get(path)
        if script is not None and entry is not None and entry.role not in PRODUCT_ROLES:
            return "script", Reason("role.script", script)
        sole = self.sole.get(path)
        if sole is not None and entry is not None and entry.role not in PRODUCT_ROLES:
            return "script", Reason("role.sole-code", sole)
        importer = self.imported.get(path)
        if importer is not None and entry is not None and entry.role in SUPPORTING_ROLES:
            by_folder = self._folder_role(path)
            if by_folder is not None:  # only the file's name said supporting
                return by_folder, Reason("role.imported", f"{path} is imported by {importer}")
        if entry is None:
            return "library", None
        matched = next(p for p in entry.paths if p.search(path))
        found = matched.search(path)
        assert found is not None
        return entry.role, Reason(entry.id, f"`{found.group(0).strip('/')}` in {path}")

    def named_only(self, path: str) -> bool:
        """Supporting by its file name alone: no folder of it makes it so."""
        entry = self.path_role(path)
        return entry is not None and entry.role in SUPPORTING_ROLES and self._folder_role(path) is not None

    def _folder_role(self, path: str) -> str | None:
        """The role the file's folders give it, when no folder makes it supporting (its
        name alone did): None otherwise."""
        for entry in self.judgement.roles:
            for pattern in entry.paths:
                found = pattern.search(path)
                if found is not None and found.group(0).endswith("/"):
                    return None if entry.role in SUPPORTING_ROLES else entry.role
        return "library"

    def supporting(self, path: str) -> bool:
        """Tests, examples, benchmarks and docs: code that does not stop the product."""
        return self.role_of(path) in SUPPORTING_ROLES

    def optional(self, path: str) -> Reason | None:
        """Experimental code and third-party submodules, priced apart: the evidence, or None."""
        for folder, (url, used, own) in self.submodules.items():
            if not path.startswith(folder + "/"):
                continue
            if path in own or any(path.startswith(source) for source in own if source.endswith("/")):
                return None  # compiled by the product's own build, or reached by its imports
            where = f" ({url})" if url else ""
            if not used:
                return Reason("role.submodule", f"{path} is in the git submodule `{folder}`{where}, which the product does not import at load")
            if path.endswith(NATIVE_EXTENSIONS):
                return Reason("role.submodule", f"{path} is a native source of the git submodule `{folder}`{where}: that dependency's own build")
            return Reason("role.submodule", f"{path} is in the git submodule `{folder}`{where}, which the product imports, but no import of the product reaches it")
        for folder, manifest in self.nested.items():
            if path.startswith(folder + "/"):
                return Reason("role.nested-project", f"{path} is in `{folder}`, a project of its own ({manifest}) that the product neither imports nor runs")
        for pattern in self.judgement.optional_paths:
            found = pattern.search(path)
            if found:
                return Reason("role.optional", f"`{found.group(0).strip('/')}` in {path}")
        return None


@lru_cache(maxsize=1)
def builtin_roles() -> Roles:
    """The built-in conventions, for callers with no ruleset at hand (tests, scripts)."""
    from tpucheck.ruleset.loader import load_judgement

    return Roles(load_judgement())


def role_of(path: str) -> str:
    return builtin_roles().role_of(path)


def supporting_path(path: str) -> bool:
    return builtin_roles().supporting(path)
