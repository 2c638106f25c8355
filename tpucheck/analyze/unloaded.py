"""Extensions the project builds that nothing loads.

Why: a trimmed fork keeps its parent's build (UniSpeech's fairseq still builds
`libnat_cuda`, which no module of it imports): those sources never run, so their kernels
are dropped from the build, not ported. Recognised by the absence of any import of the
extension's name and of any mention of it in a Python file other than the builds' (a
`load_library` path, an `import_module` string keeps it loaded). Where the project also
defines a class or function of that name, only a mention inside a string counts: the
code's uses name the definition (audit AY: DWPose's OneFormer copy builds
`MultiScaleDeformableAttention`, the name of mmcv's attention class beside it). Only builds a Python
build file declares (`CUDAExtension("pkg.ext_cuda", ...)`): a CMake library is loaded by a
path computed at run time (`torch.ops.load_library(f"{name}_{suffix}")`: audit AL's
pytorch_scatter), which no text search can rule out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tpucheck.findings import Reason

__all__ = ["UNLOADED", "unloaded_extensions"]

UNLOADED = "fallback.unloaded-extension"
_QUOTED = r"""["'][^"'\n]*\b{}\b"""
"""The name inside a string literal (pattern of one `str.format` argument)."""


def unloaded_extensions(
    declared: dict[str, set[str]], imported: frozenset[str], built: dict[str, str], python_files: Iterable[str], read: Callable[[str], str | None]
) -> dict[str, Reason]:
    """Extensions the project builds that nothing loads: no import of their name, and no
    mention of it in any Python file but the builds' (a `load_library` path, an
    `import_module` string). Their sources never run (blind set 35: UniSpeech's trimmed
    fairseq still builds `libnat_cuda`, which no module of it imports)."""
    candidates = {name for name, sources in declared.items() if sources and name not in imported}
    if not candidates:
        return {}
    builders = set(built.values())
    texts = [read(path) or "" for path in python_files if path not in builders]
    # A name the project also gives a class or function (OneFormer's extension
    # `MultiScaleDeformableAttention` beside mmcv's module class of that name) is named in
    # code by the definition; the extension only by a string (a load path, a module name).
    defined = {name for name in candidates for text in texts if re.search(rf"^[ \t]*(?:class|def)[ \t]+{re.escape(name)}\b", text, re.MULTILINE)}
    for text in texts:
        if not candidates:
            break
        candidates = {name for name in candidates if re.search(_QUOTED.format(re.escape(name)) if name in defined else rf"\b{re.escape(name)}\b", text) is None}
    return {name: Reason(UNLOADED, f"the extension `{name}` is built by {built.get(name, 'the project')} and nothing imports or loads it") for name in sorted(candidates)}
