"""`tpucheck fix`: codemods that make CUDA-bound PyTorch code device-agnostic while keeping
the GPU path, applied to the findings of a scan (runner.py), one small module per codemod."""

from __future__ import annotations

from tpucheck.fix.catalog import CODEMODS, CodemodInfo

__all__ = ["CODEMODS", "CodemodInfo"]
