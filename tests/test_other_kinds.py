"""Native sources, manifests, build files and notebooks: exact findings."""

from __future__ import annotations

import json
from textwrap import dedent

from conftest import findings_of

from tpucheck.analyze import analyze_text


def test_native_kernels_launches_and_comments(test_context) -> None:
    code = dedent(
        """
        // A __global__ void commented_out(float* x) kernel is prose, not code.
        #include <cuda_runtime.h>
        /* __global__ void also_prose(int n) */
        __global__ void scale_kernel(float* x, int n) {
          const char* s = "__global__ void in_string(";
        }
        void launch(float* x, int n) {
          scale_kernel<<<(n + 255) / 256, 256>>>(x, n);
        }
        """
    ).lstrip("\n")
    result = analyze_text("csrc/k.cu", ("native",), code, test_context)
    got = sorted((m.rule_id, m.span.line, m.span.column, m.detail) for m in result.matches)
    assert got == [("T015", 4, 1, "scale_kernel"), ("T016", 8, 15, None)]


def test_requirements_and_cuda_wheels(test_context) -> None:
    text = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\nflash_attn>=2 ; python_version>'3.8'\n# flash-attn in a comment\nnvidia-cublas-cu12\nnumpy\n"
    assert findings_of(test_context, text, "requirements.txt", ("manifest",)) == [
        ("T017", 3, 1),
        ("T017", 5, 1),
        ("T019", 1, 1),
        ("T019", 2, 1),
    ]


def test_setup_py_is_python_and_manifest_and_never_runs(test_context, tmp_path) -> None:
    marker = tmp_path / "ran"
    code = f"import os\nopen({str(marker)!r}, 'w').close()\nfrom setuptools import setup\nsetup(name='x', install_requires=['flash-attn==2.5'])\n"
    assert findings_of(test_context, code, "setup.py", ("python", "manifest")) == [("T017", 4, 36)]
    assert not marker.exists()


def test_dockerfile_with_comment(test_context) -> None:
    text = "# FROM nvidia/cuda:12.1 was the old base\nFROM nvidia/cuda:12.1.1-devel-ubuntu22.04 AS build\nRUN echo hi\n"
    assert findings_of(test_context, text, "Dockerfile", ("other",)) == [("T018", 2, 1)]


def test_notebook_cells_lines_and_installs(test_context) -> None:
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "# notes torch.cuda.synchronize()"},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["!pip install -q flash-attn --no-build-isolation\n", "import torch\n"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%%bash\n", "echo torch.cuda.synchronize()\n"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1\n", "for i in range(3):\n", "    %time y = 2\n", "    torch.cuda.synchronize()  # tpucheck: ignore[T001]\n"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["def broken(:\n"]},
        ],
    }
    result = analyze_text("nb.ipynb", ("notebook",), json.dumps(notebook), test_context)
    got = sorted((m.rule_id, m.cell, m.span.line, m.span.column) for m in result.matches)
    assert got == [("T001", 4, 4, 5), ("T017", 2, 1, 17)]
    assert list(result.suppressions) == [4 * 1_000_000 + 4]
    assert result.error is not None and result.error.kind == "syntax-error" and result.error.message.startswith("cell 5:")


def test_notebook_that_is_not_json(test_context) -> None:
    result = analyze_text("nb.ipynb", ("notebook",), "{not json", test_context)
    assert result.error is not None and result.error.kind == "notebook-error"
    assert "not valid JSON" in result.error.message


# --------------------------------------------------------------------------- CUDA sources in the inventory

KERNEL_CU = """\
#include <cuda_runtime.h>
#include "helpers.cuh"

template <typename T>
__forceinline__ __device__ T twice(T x) { return x + x; }

__global__ void scale_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]);
}
"""

HELPERS_CUH = """\
#pragma once
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a > b ? a : b; }
};
inline __host__ __device__ int ceil_div(int a, int b) { return (a + b - 1) / b; }
__device__ float declared_only(float x);
"""

# Only instantiates a template defined elsewhere: no rule matches, the file still counts.
INSTANTIATION_CU = """\
#include "flash_fwd_launch_template.h"

template void run_mha_fwd_<cutlass::half_t, 128, true>(Flash_fwd_params &params, cudaStream_t stream);
"""


def test_every_cuda_source_is_inventoried_with_its_kernels_and_helpers(tmp_path) -> None:
    from conftest import write_tree

    from tpucheck.engine import ScanOptions, scan
    from tpucheck.ruleset import load_ruleset

    root = write_tree(
        tmp_path / "repo",
        {
            "csrc/kernel.cu": KERNEL_CU,
            "csrc/helpers.cuh": HELPERS_CUH,
            "csrc/instantiations/fwd_hdim128_fp16.cu": INSTANTIATION_CU,
            "csrc/binding.cpp": "#include <torch/extension.h>\n__device__ int not_cuda_source(int x) { return x; }\n",
        },
    )
    result = scan(str(root), load_ruleset(), ScanOptions(jobs=1))
    kernel_rules = {"CK003", "CK016"}
    got = [(f.path, f.rule, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule in kernel_rules]
    assert got == [
        ("csrc/binding.cpp", "CK016", 2, 1, "minor"),
        ("csrc/helpers.cuh", "CK016", 3, 3, "minor"),
        ("csrc/helpers.cuh", "CK016", 5, 17, "minor"),
        ("csrc/kernel.cu", "CK016", 5, 17, "minor"),
        ("csrc/kernel.cu", "CK003", 7, 1, "blocker"),
    ]
    kinds = [(k.path, k.name, k.kind) for k in result.inventory.kernels if k.rule in kernel_rules]
    assert kinds == [
        ("csrc/binding.cpp", "not_cuda_source", "device-helper"),
        ("csrc/helpers.cuh", "operator()", "device-helper"),
        ("csrc/helpers.cuh", "ceil_div", "device-helper"),
        ("csrc/kernel.cu", "twice", "device-helper"),
        ("csrc/kernel.cu", "scale_kernel", "launched"),
    ]
    sources = [(c.path, c.lines, c.kernels, c.device_helpers) for c in result.inventory.cuda_sources]
    assert sources == [
        ("csrc/helpers.cuh", 6, 0, 2),
        ("csrc/instantiations/fwd_hdim128_fp16.cu", 3, 0, 0),
        ("csrc/kernel.cu", 10, 1, 1),
    ]
    inventory = result.to_dict()["inventory"]
    assert inventory["cuda_sources"][1] == {"path": "csrc/instantiations/fwd_hdim128_fp16.cu", "lines": 3, "kernels": 0, "device_helpers": 0}
    assert {k["kind"] for k in inventory["kernels"]} >= {"launched", "device-helper"}
