"""Native sources, manifests, build files and notebooks: exact findings."""

from __future__ import annotations

import json
from textwrap import dedent

from conftest import findings_of

from tpucheck.analyzers import analyze_text


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
