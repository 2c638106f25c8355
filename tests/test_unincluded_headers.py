"""Headers no compiled source of the project includes (analyze/headers.py): audit AP's
proxylessnas ships OpenCV's Android SDK, whose `opencv2/core/cuda/*.hpp` headers hold
`__global__` templates nothing of the project includes; they gave four blockers and an F.
Look-alikes keep their findings: a header a source includes (directly, through another
header, by a relative path), one a Python build names, and any header of a tree that
compiles nothing (a header-only library)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "template <typename T>\n__global__ void scale_kernel(T *out, const T *in, int n) { out[0] = in[0]; }\n"
SOURCE = '#include "ops/scale.cuh"\n#include <sdk/include/core.hpp>\n\nvoid run() {}\n'
BINDING = "import torch\nfrom ops_ext import run\n\n\ndef apply(x):\n    return run(x)\n"


def kernel_rows(root: Path, extra: dict[str, str] | None = None, *, sources: bool = True) -> tuple[set[str], set[tuple[str, str]]]:
    files = {
        "infer.py": BINDING,
        "csrc/ops/scale.cuh": KERNEL,
        "csrc/ops/shared.cuh": KERNEL.replace("scale_kernel", "shared_kernel"),
        "third_party/sdk/include/core.hpp": "#pragma once\nint core_version();\n",
        "third_party/sdk/include/cuda/transform.hpp": '#include "detail/transform_detail.hpp"\n',
        "third_party/sdk/include/cuda/detail/transform_detail.hpp": KERNEL.replace("scale_kernel", "transform_kernel"),
        **({"csrc/main.cpp": SOURCE} if sources else {}),
        **(extra or {}),
    }
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    kept = {f.path for f in result.findings if f.rule == "CK003"}
    aside = {(f.path, f.because[-1].evidence) for f in result.set_aside if f.rule == "CK003" and f.because[-1].rule == "set-aside.unincluded-header"}
    return kept, aside


def test_an_sdk_header_nothing_includes_is_set_aside(tmp_path: Path) -> None:
    kept, aside = kernel_rows(tmp_path)
    assert kept == {"csrc/ops/scale.cuh"}
    assert aside == {
        ("csrc/ops/shared.cuh", "no compiled source of the project includes csrc/ops/shared.cuh, directly or through another header"),
        (
            "third_party/sdk/include/cuda/detail/transform_detail.hpp",
            "no compiled source of the project includes third_party/sdk/include/cuda/detail/transform_detail.hpp, directly or through another header",
        ),
    }


def test_a_header_reached_through_another_header_or_a_relative_path_is_built(tmp_path: Path) -> None:
    """Adversarial: main.cpp -> scale.cuh -> ../sdk path; another source -> the SDK's transform.hpp -> its detail."""
    kept, aside = kernel_rows(
        tmp_path,
        {
            "csrc/ops/scale.cuh": KERNEL + '#include "./shared.cuh"\n',
            "csrc/other.cu": '#include "../third_party/sdk/include/cuda/transform.hpp"\n',
        },
    )
    assert kept == {"csrc/ops/scale.cuh", "csrc/ops/shared.cuh", "third_party/sdk/include/cuda/detail/transform_detail.hpp"}
    assert aside == set()


def test_a_header_a_python_build_names_is_kept(tmp_path: Path) -> None:
    """Adversarial: an old `create_extension(headers=[...])` build lists it."""
    build = "from torch.utils.ffi import create_extension\n\nffi = create_extension('ops', headers=['csrc/ops/shared.cuh'], sources=['csrc/main.cpp'])\n"
    kept, _ = kernel_rows(tmp_path, {"build.py": build})
    assert "csrc/ops/shared.cuh" in kept


def test_a_tree_that_compiles_nothing_keeps_every_header(tmp_path: Path) -> None:
    """Adversarial: a header-only library; its users include it, not this tree."""
    kept, aside = kernel_rows(tmp_path, sources=False)
    assert kept == {"csrc/ops/scale.cuh", "csrc/ops/shared.cuh", "third_party/sdk/include/cuda/detail/transform_detail.hpp"}
    assert aside == set()
