"""CUDA sources whose op has a CPU implementation the extension's dispatcher selects.

Why: a C++ extension often ships each op twice, `knn_cpu.cpp` beside `knn.cu`, and a
dispatcher that tests the tensor's device (`if (x.is_cuda()) ... else knn_cpu(x)`). On a
TPU host the CPU build compiles and runs (the tensor goes to the host around the call):
the kernel is a fallback kept, not a blocker. Recognised by the dispatch, not by names
alone: a CPU source of another op (`nms_cpu.cpp` beside `deform_conv.cu`) is no twin,
and a twin counts only where a C++ file both calls into it and tests the device.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tpucheck.analyze.packages import NATIVE as _NATIVE
from tpucheck.findings import Reason
from tpucheck.ruleset.judgement import Judgement

__all__ = ["wired_twins"]


def wired_twins(native_files: list[str], read: Callable[[str], str | None], judgement: Judgement) -> dict[str, Reason]:
    """CUDA sources whose op has a CPU implementation that the extension's dispatcher
    selects by the tensor's device: `knn/knn_cpu.cpp` beside `knn/knn.cu` (or `cpu/knn_cpu.cpp`
    and `cuda/knn_cuda.cu` in sibling folders), wired when a C++ file of the CPU source's
    folder or its parent both calls into the CPU source's functions and tests the device
    (`if (x.is_cuda()) ... else knn_cpu(...)`). A CPU source of another op (`nms_cpu.cpp`
    beside `deform_conv.cu`) is no twin."""
    twin, dispatch = judgement.cpu_twin, judgement.device_dispatch
    if twin is None or dispatch is None:
        return {}
    out: dict[str, Reason] = {}
    sources = [p for p in native_files if p.endswith(_NATIVE)]
    for cpu_path in native_files:
        found = twin.search(cpu_path.rpartition("/")[2])
        if found is None:
            continue
        folder, stem = cpu_path.rpartition("/")[0], found.group("stem")
        parent = folder.rpartition("/")[0]
        # the CUDA source beside it, or in a sibling folder (`csrc/cpu/fps_cpu.cpp` and
        # `csrc/cuda/fps_cuda.cu`, dispatched by `csrc/fps.cpp`: audit BA's pytorch_cluster)
        kernels = [p for p in sources if _op_stem(p) == stem and (p.rpartition("/")[0] == folder or (folder and p.rpartition("/")[0].rpartition("/")[0] == parent))]
        if not kernels:
            continue
        names = _defined_functions(read(cpu_path) or "")
        dispatchers = [p for p in native_files if p != cpu_path and not p.endswith(_NATIVE) and p.rpartition("/")[0] in (folder, parent)]
        for candidate in dispatchers:
            text = read(candidate) or ""
            called = next((n for n in names if re.search(rf"\b{re.escape(n)}\s*\(", text)), None)
            if called is not None and dispatch.search(text):
                for kernel in kernels:
                    out[kernel] = Reason("fallback.cpu-twin", f"{candidate} dispatches on the device to `{called}` in {cpu_path}")
                break
    for path in native_files:  # one C++ file holding the CPU implementation and the dispatch
        if path.endswith(_NATIVE) or twin.search(path.rpartition("/")[2]) is not None:
            continue
        folder, stem = path.rpartition("/")[0], _op_stem(path)
        kernels = [p for p in sources if p.rpartition("/")[0] == folder and _op_stem(p) == stem and p not in out]
        if not kernels:
            continue
        text = read(path) or ""
        if not dispatch.search(text):
            continue
        called = next((n for n in _defined_functions(text) if n.endswith("_cpu") and len(re.findall(rf"\b{re.escape(n)}\s*\(", text)) > 1), None)
        if called is not None:
            for kernel in kernels:
                out[kernel] = Reason("fallback.cpu-twin", f"{path} dispatches on the device to its own `{called}`")
    return out


def _op_stem(path: str) -> str:
    """`knn/knn_cuda_kernel.cu` -> `knn`: the op a CUDA source implements, by its name."""
    stem = path.rpartition("/")[2].rsplit(".", 1)[0]
    for suffix in ("_kernel", "_kernels", "_cuda", "_gpu"):
        stem = stem.removesuffix(suffix)
    return stem.removesuffix("_cuda")


_FUNCTION = re.compile(r"^[A-Za-z_][\w:<>,*&\s]*?[\s*&]([A-Za-z_]\w*)\s*\(")
_TYPE_LINE = re.compile(r"^[A-Za-z_][\w:<>,*& \t]*[>\w*&][ \t]*$")
_CALL_LINE = re.compile(r"^([a-z_]\w*)\s*\(")


def _defined_functions(text: str) -> list[str]:
    """Names of the functions a C++ source defines at its top: an unindented line with a
    return type (or a lower-case name after a return type on the line before: `std::tuple<
    ...>` then `random_walk_cpu(...`), a name and `(`, that is not a declaration ending in `;`."""
    skip = {"if", "for", "while", "switch", "return", "sizeof"}
    names = set()
    before = ""
    for line in text.splitlines():
        found = _FUNCTION.match(line) or (_TYPE_LINE.match(before) and _CALL_LINE.match(line))
        if found and not line.rstrip().endswith(";") and found.group(1) not in skip:
            names.add(found.group(1))
        before = line
    return sorted(names)
