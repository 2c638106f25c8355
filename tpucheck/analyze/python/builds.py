"""Whether a build script goes on when its compiled extension fails to build.

Why: a `setup.py` whose CUDA build switch defaults on stops `pip install` on a host without
CUDA, unless the script catches the failure and installs without the extension (SAM 2's
`BUILD_ALLOW_ERRORS`: `try: ext_modules = [CUDAExtension(...)] except Exception: if
allowed: ext_modules = [] else: raise`). Recognised by what the code does: a `try` whose
body builds an extension (a `CUDAExtension`/`CppExtension` call, or `build_extension`) and
one of whose handlers does not end by raising.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from tpucheck.analyze.python.conditions import fails

__all__ = ["tolerates_failed_build"]

_BUILDS = frozenset({"CUDAExtension", "CppExtension", "build_extension", "build_extensions"})


def tolerates_failed_build(module: cst.Module) -> bool:
    """A `try` that builds an extension and has a handler that goes on."""
    return any(
        _builds(node.body) and any(not fails(handler.body, frozenset()) for handler in node.handlers)
        for node in m.findall(module, m.Try())
        if isinstance(node, cst.Try)
    )


def _builds(body: cst.BaseSuite) -> bool:
    for call in m.findall(body, m.Call()):
        func = call.func if isinstance(call, cst.Call) else None
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if name in _BUILDS:
            return True
    return False
