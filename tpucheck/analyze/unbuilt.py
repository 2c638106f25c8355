"""CUDA sources no build of the project compiles: a copy left beside the one that is built.

Why: HRNet's pose code builds its NMS extension from `nms_kernel.cu` (`Extension('gpu_nms',
['nms_kernel.cu', 'gpu_nms.pyx'])`); `gpu_nms.cu` beside it, a near-copy, is in no build,
no CMake or make file, and no other source includes it (audit AN: its kernel, launch and
device helper judged false, the blocker capping the score). Read from the builds'
explicit source lists: in a folder where a Python build lists CUDA sources file by file, a
`.cu` file that no build lists (nor a folder it globs, nor a run-time build), that no text
of the project's build files or sources names, is no part of any binary. A folder no
build lists from, or a build file that also globs or lists folders, says nothing: there the
naming convention decides, as before.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from tpucheck.analyze.packages import build_paths
from tpucheck.findings import ImportFacts, Reason

__all__ = ["UNBUILT", "folder_lister", "unbuilt_sources"]

UNBUILT = "set-aside.unbuilt-source"
_LISTS_FILES = re.compile(r"\bglob\b|\blistdir\b|\biterdir\b|\bwalk\(|\bscandir\b")
_BUILD_FILE = re.compile(r"CMakeLists\.txt|[Mm]akefile|.+\.(?:cmake|mk)|BUILD(?:\.bazel)?|meson\.build")
_BUILD_TEXTS = re.compile(r"(^|/)(CMakeLists\.txt|Makefile|makefile|[^/]+\.(?:cmake|mk|sh|bash|cfg|toml|json|ya?ml))$")


def unbuilt_sources(
    python: Sequence[str],
    facts: Callable[[str], ImportFacts | None],
    native: Iterable[str],
    others: Iterable[str],
    read: Callable[[str], str | None],
    listing: Callable[[str], Iterable[str]] = lambda _folder: (),
) -> dict[str, Reason]:
    """CUDA source path -> why no build compiles it. `others`: every other file of the
    tree (build files among them are read for the file's name); `listing`: the names in a
    folder of the tree as it is on disk, discovered or not (a CMake file beside a source
    is a build of its own)."""
    listed: dict[str, str] = {}  # a source a build lists file by file -> the build file
    globbed: set[str] = set()  # folders a build takes every source of
    for path in sorted(python):
        known = facts(path)
        if known is None:
            continue
        for build in known.builds:
            for source in build_paths(path, build):
                if source.endswith("/"):
                    globbed.add(source)
                else:
                    listed.setdefault(source, path)
        for jit in known.jit_builds:
            folder = path.rpartition("/")[0]
            for source in jit.sources:
                listed.setdefault(posixpath.normpath(posixpath.join(folder, source)), path)
                listed.setdefault(posixpath.normpath(source), path)
    # only a build beside its sources, or one folder above them (`setup.py` listing
    # `src/kernel.cu`): a build deep elsewhere that picks one file out of another project's
    # tree (a submodule's) says nothing of that project's other files
    folders = {p.rpartition("/")[0]: p for p in sorted(listed) if p.endswith(".cu") and _near(p, listed[p])}
    sources = sorted(native)
    candidates = [
        p
        for p in sources
        if p.endswith(".cu") and p not in listed and p.rpartition("/")[0] in folders and not any(p.startswith(g) for g in globbed)
    ]
    if not candidates:
        return {}
    names = {posixpath.basename(p) for p in candidates}
    mentioned: dict[str, set[str]] = {}  # a candidate's name -> the files naming it
    builders = {p for p in python if (known := facts(p)) is not None and (known.builds or known.jit_builds)}
    for path in (*sources, *sorted(builders), *(p for p in others if _BUILD_TEXTS.search(p))):
        text = read(path) or ""
        for name in names:
            if name in text:
                mentioned.setdefault(name, set()).add(path)
    out: dict[str, Reason] = {}
    for path in candidates:
        if mentioned.get(posixpath.basename(path), set()) - {path}:
            continue
        names_beside = listing(path.rpartition("/")[0])
        if any(_BUILD_FILE.fullmatch(name) for name in names_beside):
            continue  # a CMake or make file beside it builds what it names (cutlass's tests)
        if posixpath.basename(path).rpartition(".")[0] + ".py" in names_beside:
            continue  # `upfirdn2d.py` beside `upfirdn2d.cu` builds it by its own name at run time
        built = folders[path.rpartition("/")[0]]
        if _LISTS_FILES.search(read(listed[built]) or ""):
            continue  # the build file also takes sources by a pattern or a listing
        out[path] = Reason(UNBUILT, f"no build compiles {path}: {listed[built]} lists {posixpath.basename(built)} from its folder, not it")
    return out


def _near(source: str, build_file: str) -> bool:
    """The source sits in the build file's folder or one folder below it."""
    folder = build_file.rpartition("/")[0]
    rest = source[len(folder) + 1 :] if folder else source
    return (not folder or source.startswith(folder + "/")) and rest.count("/") <= 1


def folder_lister(root: str) -> Callable[[str], list[str]]:
    """The names in a folder of the tree on disk (a build file discovery leaves out)."""

    def listing(folder: str) -> list[str]:
        try:
            return sorted(os.listdir(os.path.join(root, folder)))
        except OSError:
            return []

    return listing
