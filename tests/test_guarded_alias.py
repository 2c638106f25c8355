"""A name made an alias only inside a branch CUDA alone takes (`if torch.cuda.is_available()
...: extension = CUDAExtension`, detectron2's setup.py) builds the CUDA extension only where
CUDA is: the call through the name after the branch keeps the branch's guard (audit AU:
SparseR-CNN's `extension("detectron2._C", ...)`, a blocker). Adversarial: an alias bound
outside any CUDA test, or rebound after the branch, keeps the blocker."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = """\
import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    sources = glob.glob(os.path.join("csrc", "*.cpp"))
    extension = CppExtension
    if torch.cuda.is_available() and CUDA_HOME is not None or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += glob.glob(os.path.join("csrc", "cuda", "*.cu"))
    return [extension("pkg._C", sources)]


setup(name="pkg", ext_modules=get_extensions())
"""


def _builds(tmp_path: Path, code: str) -> list[tuple[int, int, str, tuple[str, ...]]]:
    root = write_tree(tmp_path / "repo", {"setup.py": code})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "CK001"]


def test_a_call_through_an_alias_bound_under_a_cuda_test_keeps_its_guard(tmp_path: Path) -> None:
    assert _builds(tmp_path, SETUP) == [
        (13, 21, "info", ("guard.test", "severity.kernel-fallback")),
        (15, 13, "info", ("guard.test", "severity.kernel-fallback")),
    ]


def test_an_alias_bound_outside_a_cuda_test_keeps_the_blocker(tmp_path: Path) -> None:
    code = SETUP.replace("    extension = CppExtension\n", "    extension = CUDAExtension\n")
    assert [(line, severity) for line, _, severity, _ in _builds(tmp_path, code)] == [(11, "blocker"), (13, "info"), (15, "blocker")]


def test_an_alias_rebound_after_the_branch_keeps_the_blocker(tmp_path: Path) -> None:
    code = SETUP.replace("    return [extension(", "    extension = CUDAExtension\n    return [extension(")
    assert [(line, severity) for line, _, severity, _ in _builds(tmp_path, code)] == [(13, "info"), (15, "blocker"), (16, "blocker")]
