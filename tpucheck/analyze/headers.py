"""Headers no compiled source of the project includes: an SDK's header tree shipped as
files (OpenCV's Android SDK under a deployment folder, with its `core/cuda/*.hpp`), not
code any build of the project compiles.

Why: audit AP's proxylessnas carries OpenCV's prebuilt Android SDK; its CUDA headers
(`__global__` templates in `opencv2/core/cuda/detail/*.hpp`) gave 834 findings and four
blockers, an F grade, for code nothing of the project includes. A header counts only when
something compiled reaches it: read from the `#include` lines of the project's C, C++ and
CUDA sources (and of Cython and Python text holding `#include`, for inline builds), each
resolved to the tree's headers by its path's tail, and followed from header to header. A
header nothing reaches is no part of any binary the project builds.

Never applied to a tree that compiles nothing: a header-only library (its users include
it) says nothing by having no includer here. A header a build file or a Python file names
(CMake's `install(FILES ...)`, an old `create_extension(headers=[...])`) is kept too.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from collections.abc import Callable, Iterable

from tpucheck.findings import Reason

__all__ = ["ENGINE_PLUGIN", "UNINCLUDED", "engine_plugins", "unincluded_headers"]

UNINCLUDED = "set-aside.unincluded-header"
HEADERS = (".h", ".hpp", ".hh", ".hxx", ".cuh")
SOURCES = (".cu", ".cpp", ".cc", ".cxx", ".c")
_INCLUDE = re.compile(r"""^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]""", re.MULTILINE)
_CYTHON_EXTERN = re.compile(r"""\bcdef[ \t]+extern[ \t]+from[ \t]+["']([^"'\n]+)["']""")
_BUILD_TEXT = re.compile(r"(^|/)(CMakeLists\.txt|Makefile|makefile|[^/]+\.(?:cmake|mk|bzl|bazel)|BUILD|meson\.build)$")


def unincluded_headers(native: Iterable[str], others: Iterable[str], python: Iterable[str], read: Callable[[str], str | None]) -> dict[str, Reason]:
    """Header path -> why nothing compiled includes it. `native`: the tree's C, C++ and
    CUDA files; `others`: its other files (Cython and build files among them); `python`:
    its Python files (read only when they hold `#include`, an inline build's source)."""
    paths, python, others = sorted(native), sorted(python), sorted(others)
    headers = [p for p in paths if p.endswith(HEADERS)]
    sources = [p for p in paths if p.endswith(SOURCES)]
    if not headers or not sources:
        return {}
    text_of, included = _includes(headers, read)

    roots = [*sources, *(p for p in others if p.endswith((".pyx", ".pxd")))]
    roots += [p for p in python if "#include" in text_of(p)]
    reached: set[str] = set()
    stack = [h for root in roots for h in included(root)]
    while stack:
        header = stack.pop()
        if header in reached:
            continue
        reached.add(header)
        stack.extend(included(header) - reached)
    unreached = [h for h in headers if h not in reached]
    if not unreached:
        return {}
    # a build file or a Python build naming the header (`create_extension(headers=[...])`)
    named = " ".join(text_of(p) for p in (*others, *python) if _BUILD_TEXT.search(p) or p.endswith(".py"))
    return {
        h: Reason(UNINCLUDED, f"no compiled source of the project includes {h}, directly or through another header")
        for h in unreached
        if posixpath.basename(h) not in named
    }


def _includes(headers: list[str], read: Callable[[str], str | None]) -> tuple[Callable[[str], str], Callable[[str], set[str]]]:
    """A cached reader, and what a file includes among the tree's headers: each `#include`
    (or Cython `cdef extern from`) resolved beside the file or by its path's tail."""
    by_tail: dict[str, list[str]] = {}
    for header in headers:
        parts = header.split("/")
        for i in range(len(parts)):
            by_tail.setdefault("/".join(parts[i:]), []).append(header)
    headers_set = set(headers)
    texts: dict[str, str] = {}

    def text_of(path: str) -> str:
        found = texts.get(path)
        if found is None:
            found = texts[path] = read(path) or ""
        return found

    def included(path: str) -> set[str]:
        text = text_of(path)
        found: set[str] = set()
        folder = path.rpartition("/")[0]
        for written in (*_INCLUDE.findall(text), *_CYTHON_EXTERN.findall(text)):
            name = posixpath.normpath(written.strip())
            beside = posixpath.normpath(posixpath.join(folder, name)) if folder else name
            if beside in headers_set:
                found.add(beside)
            found.update(by_tail.get(name.lstrip("./"), ()))
        return found

    return text_of, included


ENGINE_PLUGIN = "alternative.engine-plugin"


def engine_plugins(native: Iterable[str], read: Callable[[str], str | None], engine_headers: Iterable[str]) -> dict[str, Reason]:
    """C, C++ and CUDA files that include a CUDA-only engine's plugin API (`NvInfer.h`),
    directly or through the project's own headers -> why: a TensorRT plugin runs inside
    that engine, never in PyTorch, so it is part of a deployment the port leaves behind
    (blind set 61: wenet's LayerNorm plugin for its TensorRT runtime)."""
    wanted = frozenset(engine_headers)
    paths = sorted(native)
    if not wanted or not paths:
        return {}
    headers = [p for p in paths if p.endswith(HEADERS)]
    text_of, included = _includes(headers, read)
    direct = {p: name for p in paths if (name := next((n for n in (posixpath.basename(w.strip()) for w in _INCLUDE.findall(text_of(p))) if n in wanted), None))}
    if not direct:
        return {}
    # who includes whom, walked back from the files that include the engine's header
    includers: dict[str, set[str]] = {}
    for path in paths:
        for inner in included(path):
            includers.setdefault(inner, set()).add(path)
    via: dict[str, str] = {p: p for p in direct}
    queue = deque(sorted(direct))
    while queue:
        current = queue.popleft()
        for outer in sorted(includers.get(current, ())):
            if outer not in via:
                via[outer] = via[current]
                queue.append(outer)
    out: dict[str, Reason] = {}
    for path in sorted(via):
        source = via[path]
        out[path] = Reason(ENGINE_PLUGIN, f"{path} includes `{direct[source]}`{'' if source == path else f' (through {source})'}: a plugin of a CUDA-only engine, run inside that engine, never in PyTorch; a deployment the port leaves behind")
    return out
