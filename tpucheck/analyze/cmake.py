"""The compiled libraries a CMake build makes, and the sources each takes.

A PyTorch extension is not always a `CUDAExtension` in setup.py: some projects build it
with CMake (`cuda_add_library(vptq SHARED ${SOURCES})`, `pybind11_add_module(_C ...)`) and
load the result as a module (`import vptq.libvptq`). The import graph needs the same fact
as for setup.py builds: which module a CUDA source ends up in, so that a `try` around that
module's import keeps its kernels optional. Read as text (never run): `set()` variables
are substituted, `file(GLOB ...)` patterns become the folders they glob, and a library
is named both as its target and as the file CMake writes (`lib` + target on Unix).
"""

from __future__ import annotations

import posixpath
import re

from tpucheck.findings import Build

__all__ = ["cmake_builds", "is_cmake_file"]

_TARGETS = re.compile(
    r"\b(?:add_library|cuda_add_library|pybind11_add_module|nanobind_add_module|python_add_library|Python_add_library|Python3_add_library)\s*\(([^)]*)\)",
    re.IGNORECASE,
)
_SET = re.compile(r"\bset\s*\(\s*(\w+)\s+([^)]*)\)", re.IGNORECASE)
_GLOB = re.compile(r"\bfile\s*\(\s*GLOB(?:_RECURSE)?\s+(\w+)\s+([^)]*)\)", re.IGNORECASE)
_VARIABLE = re.compile(r"\$\{(\w+)\}")
_COMMENT = re.compile(r"#[^\n]*")
_KEYWORDS = frozenset({"SHARED", "STATIC", "MODULE", "OBJECT", "INTERFACE", "EXCLUDE_FROM_ALL", "IMPORTED", "ALIAS", "WITH_SOABI", "NO_EXTRAS", "THIN_LTO", "CONFIGURE_DEPENDS", "LIST_DIRECTORIES", "RELATIVE", "TRUE", "FALSE"})
_NATIVE = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c")


def is_cmake_file(path: str) -> bool:
    name = posixpath.basename(path)
    return name == "CMakeLists.txt" or name.endswith(".cmake")


def cmake_builds(text: str) -> list[Build]:
    """Each library target with its sources as written, relative to the CMake file's
    folder: listed files, and for a globbed variable the folder its patterns glob (`"*.cu"`
    in csrc/CMakeLists.txt: `./`, every source under the file's folder)."""
    text = _COMMENT.sub("", text)
    variables: dict[str, list[str]] = {}
    for found in _SET.finditer(text):
        variables.setdefault(found.group(1), _words(found.group(2), variables))
    for found in _GLOB.finditer(text):
        folders = sorted({(posixpath.dirname(pattern) or ".") + "/" for pattern in _words(found.group(2), variables) if "*" in pattern})
        variables[found.group(1)] = folders
    builds: list[Build] = []
    for found in _TARGETS.finditer(text):
        words = _words(found.group(1), variables)
        if not words or not re.fullmatch(r"[\w.\-]+", words[0]):
            continue
        target, rest = words[0], words[1:]
        if "IMPORTED" in rest or "ALIAS" in rest or "INTERFACE" in rest:
            continue  # names a library built elsewhere
        sources = tuple(word for word in rest if word not in _KEYWORDS and (word.endswith("/") or word.lower().endswith(_NATIVE)))
        for name in dict.fromkeys((target, f"lib{target}")):
            builds.append(Build(name, sources))
    return builds


def _words(arguments: str, variables: dict[str, list[str]]) -> list[str]:
    """The arguments' words with `${VAR}` replaced by the variable's words (a variable
    inside a longer word, `${SRC_DIR}/x.cu`, by its first word). The CMake file's own
    folder (`${CMAKE_CURRENT_SOURCE_DIR}`) is `.`; a word that still starts at an unknown
    variable's empty value (`/x.cu`) is dropped: its folder is not known."""
    out: list[str] = []
    for raw in arguments.split():
        word = raw.strip("\"'")
        whole = _VARIABLE.fullmatch(word)
        if whole is not None:
            out.extend(_HERE if whole.group(1) in _CURRENT else variables.get(whole.group(1), ()))
            continue
        word = _VARIABLE.sub(lambda m: "." if m.group(1) in _CURRENT else (variables.get(m.group(1)) or [""])[0].rstrip("/"), word)
        if word.startswith("/"):
            continue
        out.append(word[2:] if word.startswith("./") and len(word) > 2 else word)
    return out


_CURRENT = frozenset({"CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR"})
_HERE = ["."]
