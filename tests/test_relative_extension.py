"""An extension built in place and imported relatively (`from ._knn_cuda import knn`),
under a try whose handler binds None and whose ops ask `callable(...)` before calling it,
keeps a fallback (audit AS: CamLiFlow's correlation, FPS and kNN kernels, seven blockers
judged info, capping the grade at D). Adversarial: the same relative import outside any
try is required, and its kernels stay blockers."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\nsetup(name='knn', ext_modules=[CUDAExtension(name='_knn_cuda', sources=['knn/knn.cpp', 'knn/knn_kernel.cu'])], cmdclass={'build_ext': BuildExtension})\n"
KERNEL = "__global__ void knn_kernel(const float *xyz, long *idx, int n) { idx[0] = 0; }\n"
WRAPPER = """\
import torch

try:
    from ._knn_cuda import _knn_cuda
except ImportError:
    _knn_cuda = None


def knn(xyz, query, k, cpp_impl=True):
    if cpp_impl and callable(_knn_cuda) and xyz.is_cuda:
        return _knn_cuda(xyz, query, k)
    return torch.cdist(query, xyz).topk(k, largest=False).indices
"""
MODEL = "import torch\nfrom .csrc.wrapper import knn\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return knn(x, x, 8)\n"


def kernel_rows(root: Path, wrapper: str) -> list[tuple[str, str]]:
    write_tree(
        root,
        {
            "train.py": "from models.net import Net\n\nNet()\n",
            "models/__init__.py": "",
            "models/net.py": MODEL,
            "models/csrc/__init__.py": "",
            "models/csrc/setup.py": SETUP,
            "models/csrc/wrapper.py": wrapper,
            "models/csrc/knn/knn.cpp": "#include <torch/extension.h>\n",
            "models/csrc/knn/knn_kernel.cu": KERNEL,
        },
    )
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.severity, f.because[0].rule if f.because else "") for f in result.findings if f.rule == "CK003"]


def test_a_relatively_imported_extension_with_a_fallback_is_optional(tmp_path: Path) -> None:
    assert kernel_rows(tmp_path / "repo", WRAPPER) == [("minor", "fallback.optional-module")]


def test_a_relatively_imported_extension_outside_a_try_is_required(tmp_path: Path) -> None:
    required = "import torch\nfrom ._knn_cuda import _knn_cuda\n\n\ndef knn(xyz, query, k):\n    return _knn_cuda(xyz, query, k)\n"
    assert kernel_rows(tmp_path / "repo", required) == [("blocker", "kernel.known-op")]
