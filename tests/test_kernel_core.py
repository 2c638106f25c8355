"""A kernel library's core counts the kernels' host side (rules/judgement.yaml
`score.core.kernel_side`, judge/core.py).

Blind set 59 banded DeepEP F ("the core is custom CUDA"); tpucheck graded it D because
its `.cpp` bindings, `.hpp` launchers and CUDA-runtime wrappers, each with a CUDA include
and nothing else to port, counted as files of other work (8 kernel files of 34). Here a
library of one kernel and three host-side sources is F; the look-alikes stay D: the same
host side beside more product code that needs other edits, and a host side kept behind a
build that falls back to PyTorch."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "#include <cuda_runtime.h>\n__global__ void warp_scan_kernel(float* out, const float* in, int n) {\n  out[0] = in[0];\n}\n"
BINDING = '#include <cuda_runtime.h>\n#include <torch/extension.h>\n#include "launch.cuh"\n#include "runtime.hpp"\nvoid scan_launch(float* out, const float* in, int n);\n'
LAUNCHER = "#pragma once\n#include <cuda_runtime.h>\ninline int blocks(int n) { return (n + 255) / 256; }\n"
EDITS = """\
import torch

def place(x):
    return x.cuda()
"""


def _grade(root: Path) -> tuple[str, str]:
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return result.score.grade, result.score.grade_meaning


def test_a_kernel_and_its_host_side_make_a_core_of_custom_cuda(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "lib",
        {"csrc/scan.cu": KERNEL, "csrc/binding.cpp": BINDING, "csrc/launch.cuh": LAUNCHER, "csrc/runtime.hpp": LAUNCHER, "lib/__init__.py": "", "lib/ops.py": EDITS},
    )
    grade, meaning = _grade(root)
    assert grade == "F"
    assert "kernels with no fallback and their host side are" in meaning
    assert "in 4 of the 5 product files that need work" in meaning


def test_other_work_in_most_files_keeps_grade_d(tmp_path: Path) -> None:
    """Adversarial: the same native tree beside six Python modules that need edits: the
    kernel files are four of ten, under half."""
    files = {"csrc/scan.cu": KERNEL, "csrc/binding.cpp": BINDING, "csrc/launch.cuh": LAUNCHER, "csrc/runtime.hpp": LAUNCHER, "lib/__init__.py": ""}
    files.update({f"lib/mod{i}.py": EDITS for i in range(6)})
    grade, _ = _grade(write_tree(tmp_path / "lib", files))
    assert grade == "D"


def test_host_side_beside_only_a_known_op_makes_no_core(tmp_path: Path) -> None:
    """Adversarial: the host side of a standard op's kernel (NMS) is no core of custom CUDA."""
    root = write_tree(
        tmp_path / "lib",
        {"csrc/nms.cu": KERNEL.replace("warp_scan_kernel", "nms_kernel"), "csrc/binding.cpp": BINDING, "csrc/launch.cuh": LAUNCHER, "lib/__init__.py": "", "lib/ops.py": EDITS},
    )
    grade, _ = _grade(root)
    assert grade != "F"
