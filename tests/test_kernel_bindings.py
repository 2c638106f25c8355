"""The CUDA-isms of an autograd Function that calls an extension the project builds are the
kernel's Python side (audits S, V and Z judged them false when reported apart): set aside
with their reason. Adversarial: a Function that calls no extension, and a plain function
that calls one, keep their findings."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    "setup(name='ops', ext_modules=[CUDAExtension('point_ops_cuda', ['ops/src/group.cu'])])\n"
)

FUNCTIONS = """\
import torch
from torch.autograd import Function

import point_ops_cuda


class Grouping(Function):
    @staticmethod
    def forward(ctx, features, idx):
        out = torch.cuda.FloatTensor(idx.shape[0], features.shape[1]).zero_()
        point_ops_cuda.grouping_forward(features, idx, out)
        return out


class Scale(Function):
    @staticmethod
    def forward(ctx, x):
        buf = torch.cuda.FloatTensor(x.shape[0]).zero_()
        return x * 2 + buf


def group(features, idx):
    out = torch.cuda.FloatTensor(idx.shape[0], features.shape[1]).zero_()
    point_ops_cuda.grouping_forward(features, idx, out)
    return out
"""


def test_a_kernel_bindings_own_buffers_are_set_aside_with_their_reason(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for path, text in {"setup.py": SETUP, "ops/__init__.py": "", "ops/functions.py": FUNCTIONS, "ops/src/group.cu": "__global__ void g(float* o) { o[0] = 0.f; }\n"}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    # the Function that calls no extension and the plain function keep their findings
    assert sorted((f.rule, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule == "CA021") == [
        ("CA021", 18, 15, "major"),
        ("CA021", 23, 11, "major"),
    ]
    (aside,) = [f for f in result.set_aside if f.rule == "CA021"]
    assert (aside.span.line, aside.span.column) == (10, 15)
    assert aside.because[-1].to_dict() == {
        "rule": "set-aside.kernel-binding",
        "evidence": "inside `Grouping`, the autograd Function calling the project's `point_ops_cuda` extension: rewritten with its kernel",
    }
