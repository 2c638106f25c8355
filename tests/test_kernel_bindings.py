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
        "evidence": "inside `Grouping`, which calls the project's `point_ops_cuda` extension: rewritten with its kernel",
    }


TRITON = """\
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel(Q, Out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(Out + offs, tl.load(Q + offs))


def flash_forward(q):
    assert q.is_cuda
    out = torch.empty_like(q)
    _fwd_kernel[(1,)](q, out, N=q.numel())
    return out


def reference(q):
    assert q.is_cuda
    return q * 1
"""


def test_the_host_side_of_a_triton_kernel_is_set_aside_with_it(tmp_path: Path) -> None:
    """Audit AM (MPT's flash_attn_triton.py): `assert q.is_cuda` in the function that
    launches the module's own Triton kernel is that kernel's port. Adversarial: the same
    assert in a function launching nothing keeps its finding."""
    (tmp_path / "attn.py").write_text(TRITON)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings if f.rule == "DP013"] == [("DP013", 20)]
    aside = [(f.rule, f.span.line, f.because[-1].evidence) for f in result.set_aside if f.rule == "DP013"]
    assert aside == [("DP013", 13, "inside `flash_forward`, which calls the Triton kernel `_fwd_kernel`: rewritten with its kernel")]


def test_a_binding_through_a_renamed_triton_fork_is_the_kernels(tmp_path: Path) -> None:
    """Audit AQ (DualFocus's copy of MPT's Triton attention imports `triton_pre_mlir as
    triton`, a fork under its own name, in a project of its own inside
    InternLM-XComposer): bindings are read in every Python file that imports Triton under
    any of its names, not only the product's."""
    forked = TRITON.replace("import triton\n", "import triton_pre_mlir as triton\n").replace("import triton.language as tl\n", "import triton_pre_mlir.language as tl\n")
    assert forked != TRITON
    for path, text in {"train.py": "import torch\n", "requirements.txt": "torch\n", "projects/side/pyproject.toml": "[project]\nname = 'side'\n", "projects/side/side/attn.py": forked}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [f.span.line for f in result.findings if f.rule == "DP013"] == [20]
    assert [f.span.line for f in result.set_aside if f.rule == "DP013" and f.because[-1].rule == "set-aside.kernel-binding"] == [13]


BACKEND = """\
import os
from torch.utils.cpp_extension import load

_src = os.path.dirname(os.path.abspath(__file__))
_backend = load(name="_grid_encoder", sources=[os.path.join(_src, "src", f) for f in ["grid.cu", "bindings.cpp"]])
"""

GRID = """\
import torch
from torch.autograd import Function
from torch.cuda.amp import custom_fwd

from .backend import _backend
from .other import _backend as _plain


class _encode(Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.half)
    def forward(ctx, inputs, embeddings):
        return _backend.encode_forward(inputs, embeddings)


class _blend(Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.half)
    def forward(ctx, inputs):
        return _plain.blend(inputs)
"""


def test_a_function_calling_a_run_time_build_is_its_binding(tmp_path: Path) -> None:
    """Audit AQ (monosdf's hash encoder): `_backend = load(...)` in backend.py, imported by
    the module whose autograd Function calls it; its `custom_fwd` is the kernel's.
    Adversarial: a name `_backend` imported from a module that builds nothing keeps it."""
    root = tmp_path / "repo"
    for path, text in {
        "enc/__init__.py": "",
        "enc/backend.py": BACKEND,
        "enc/other.py": "_backend = None\n",
        "enc/grid.py": GRID,
        "enc/src/grid.cu": "__global__ void encode(float *x) { x[0] = 0; }\n",
        "enc/src/bindings.cpp": "#include <torch/extension.h>\n",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    kept = [(f.span.line, f.severity) for f in result.findings if f.rule == "CA014"]
    aside = [(f.span.line, f.because[-1].rule, f.because[-1].evidence) for f in result.set_aside if f.rule == "CA014"]
    assert kept == [(18, "major")]
    assert aside == [(11, "set-aside.kernel-binding", "inside `_encode`, which calls the project's `_backend` extension: rewritten with its kernel")]
