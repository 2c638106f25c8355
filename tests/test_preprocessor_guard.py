"""A C/C++ line compiled only under a CUDA build's macro (analyze/native.py,
`guard.preprocessor`; audits AL and BA: pytorch_scatter's and pytorch_cluster's
dispatchers include their CUDA headers under `#ifdef WITH_CUDA`): a build without CUDA
leaves it out, so the finding is guarded (at most minor) with the directive as its
reason. Adversarial: a macro no CUDA build alone defines (`WITH_PYTHON`), the `#else` of
`#ifdef WITH_CUDA`, a compound condition, an `#elif` branch and a `.cu` file keep their
weight."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.native import cuda_only_lines
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
MACROS = re.compile(r"^(WITH_CUDA|__CUDACC__)$")


def test_lines_under_a_cuda_macro_are_compiled_out_without_cuda() -> None:
    code = "\n".join([
        "#include <torch/extension.h>",  # 1
        "#ifdef WITH_CUDA",  # 2
        "#include \"cuda/op_cuda.h\"",  # 3
        "#else",  # 4
        "#include \"cpu/op_cpu.h\"",  # 5
        "#endif",  # 6
        "#ifndef WITH_CUDA",  # 7
        "int cpu_only;",  # 8
        "#else",  # 9
        "int cuda_side;",  # 10
        "#endif",  # 11
        "#if defined(WITH_CUDA) && defined(WITH_PYTHON)",  # 12
        "int compound;",  # 13
        "#endif",  # 14
        "#if !defined(__CUDACC__)",  # 15
        "int host;",  # 16
        "#elif 1",  # 17
        "int other;",  # 18
        "#endif",  # 19
        "#ifdef WITH_PYTHON",  # 20
        "#if defined(WITH_CUDA)",  # 21
        "int nested;",  # 22
        "#endif",  # 23
        "#endif",  # 24
    ])  # fmt: skip
    assert cuda_only_lines(code, MACROS) == {3: "#ifdef WITH_CUDA", 10: "the #else of `#ifndef WITH_CUDA`", 22: "#if defined(WITH_CUDA)"}


DISPATCH = """\
#include <torch/script.h>
#include "cpu/op_cpu.h"

#ifdef WITH_CUDA
#include "cuda/op_cuda.h"
#endif

#ifdef WITH_PYTHON
#include <cuda_runtime.h>
#endif
"""


def test_a_cuda_include_a_build_without_cuda_leaves_out_is_minor(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"csrc/op.cpp": DISPATCH, "csrc/op_kernel.cu": '#ifdef WITH_CUDA\n#include "cuda/op_cuda.h"\n#endif\n'})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.path, f.span.line, f.severity, tuple(r.evidence for r in f.because if r.rule == "guard.preprocessor")) for f in result.findings if f.rule == "CK013")
    assert found == [
        ("csrc/op.cpp", 5, "minor", ("under `#ifdef WITH_CUDA`: a build without CUDA compiles it out",)),
        ("csrc/op.cpp", 9, "major", ()),
        ("csrc/op_kernel.cu", 2, "major", ()),
    ]
