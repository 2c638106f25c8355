"""A parameter every module-level call fills with a CUDA availability flag is that flag
(statements.flag_parameters): theseus's `ext_cls = CUDAExtension if has_cuda else
CppExtension` in a builder called as `make(compile_cuda_support)`, the flag set from
`torch.cuda.is_available()` (blind set 36, in sample: its one blocker). Look-alikes keep
their findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = """\
import os

import torch
from setuptools import setup
from torch.utils import cpp_extension as ext

forced = os.environ.get("FORCE_CUDA")
support = torch.cuda.is_available() if forced is None else forced != "0"


def make(has_cuda):
    cls = ext.CUDAExtension if has_cuda else ext.CppExtension
    return cls(name="pkg.solver", sources=["pkg/solver.cpp"])


setup(name="pkg", ext_modules=[{call}])
"""


def build_class_reference(root: Path, call: str) -> tuple[str, list[str]]:
    (root / "setup.py").write_text(SETUP.format(call=call), encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = next(f for f in result.findings if f.rule == "CK001" and f.span.line == 12)
    return found.severity, [r.rule for r in found.because]


def test_a_builder_every_call_gives_the_cuda_flag_tests_cuda(tmp_path: Path) -> None:
    assert build_class_reference(tmp_path, "make(support)") == ("info", ["guard.test", "severity.kernel-fallback"])
    assert build_class_reference(tmp_path, "make(has_cuda=torch.cuda.is_available())") == ("info", ["guard.test", "severity.kernel-fallback"])


@pytest.mark.parametrize("call", ["make(True)", "make(support), make(True)", "make(os.environ.get('BUILD') == '1')"])
def test_a_builder_some_call_turns_on_keeps_its_blocker(tmp_path: Path, call: str) -> None:
    """Adversarial: a literal, a second call passing something else, or a setting."""
    assert build_class_reference(tmp_path, call)[0] == "blocker"
