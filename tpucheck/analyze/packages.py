"""The project's own packages, as the judgement of kernels needs them: which hold compiled
code of their own (so an import of a CUDA-only package's name that is one of them is the
project's code, its kernels in the inventory), and when a package the product imports only
by choice leaves an untested placeholder in its place (its kernels a known edit); and the
sources a build lists, as project paths.

Pure functions of the import graph's facts; `reachability` calls them once per scan.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from tpucheck.findings import Build, Reason

__all__ = ["GUARDED_MODULE", "NATIVE", "build_paths", "own_packages", "package_folder", "placeholder_evidence"]

NATIVE = (".cu", ".cuh")
"""CUDA sources."""
GUARDED_MODULE = "fallback.guarded-module"
"""The evidence rule of a module every importer loads under a try or an if."""


def package_folder(path: str, packages: set[str]) -> str:
    """The innermost folder above `path` that is a package of the project (holds an
    `__init__.py`), or "" when none is."""
    folder = path.rpartition("/")[0]
    while folder and folder not in packages:
        folder = folder.rpartition("/")[0]
    return folder


def placeholder_evidence(reason: Reason, path: str, packages: set[str], placeholder_only: set[str]) -> Reason:
    """A package's evidence for a CUDA source inside it, as `guard.placeholder` when every
    import of the package by choice sits in a try whose handler binds an untested None or
    `object` in its place (BasicSR's `ModulatedDeformConvPack = object`): the product loads
    without the kernels, and fails where it uses them. `placeholder_only`: the paths of
    such packages' `__init__` files."""
    if reason.rule != GUARDED_MODULE:
        return reason
    folder = package_folder(path, packages)
    if f"{folder}/__init__.py" not in placeholder_only and f"{folder}/__init__.pyi" not in placeholder_only:
        return reason
    return Reason("guard.placeholder", f"{reason.evidence}; the try binds an untested None or `object` in its place: what uses the kernels fails")


def own_packages(packages: set[str], built: dict[str, tuple[str, Build]], native_files: list[str], supporting: Callable[[str], bool]) -> dict[str, str]:
    """The project's packages that hold compiled code of their own, each with a CUDA source
    of it (its build file when none of the sources it lists is in the tree): the top
    package of an extension a build names (`pointnet2_ops` of `pointnet2_ops._ext`), and
    the innermost package a product CUDA source sits in (`pkg/_ext-src/src/x.cu` -> `pkg`).
    Keyed by the name an import uses, and only for folders that are packages of the
    project. The judgement places the source: code priced apart (a submodule) is not the
    product's own."""
    names = {folder.rpartition("/")[2] for folder in packages}
    native = sorted(native_files)
    own: dict[str, str] = {}
    for name, (path, build) in sorted(built.items()):
        if name in names:
            listed = build_paths(path, build)
            folders = [d for d in listed if d.endswith("/")]
            own[name] = next((f for f in native if f in listed or any(f.startswith(d) for d in folders)), path)
    for path in native:
        if path.endswith(NATIVE) and not supporting(path) and (folder := package_folder(path, packages)):
            own.setdefault(folder.rpartition("/")[2], path)
    return own


def build_paths(path: str, build: Build) -> set[str]:
    """The sources a build in the file at `path` lists, as project paths: each relative to
    the build file's folder or to the project's top (the import graph decides which, so
    both); a folder (`csrc/`) keeps its slash and stands for every source under it."""
    folder = path.rpartition("/")[0]
    out: set[str] = set()
    for source in build.sources:
        slash = "/" if source.endswith("/") else ""
        out.update((posixpath.normpath(source) + slash, posixpath.normpath(posixpath.join(folder, source)) + slash))
    return out
