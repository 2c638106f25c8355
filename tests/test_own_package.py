"""An import named like a CUDA-only package that the project itself contains, with its own
compiled code, is the project's code (blind set 24: Pointnet2_PyTorch's `pointnet2_ops`,
which the repository builds, was priced as the PyPI package on top of its own kernels).
Set aside with its reason. Adversarial: the same import when the package of that name holds
no compiled code, or when the code is a git submodule priced apart, stays a blocker."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    "setup(name='knn', ext_modules=[CUDAExtension('knn_cuda._ext', ['csrc/knn.cu'])])\n"
)
MODEL = "import torch\nfrom knn_cuda import KNN\n\n\ndef neighbours(x):\n    return KNN(k=4)(x, x)\n"
KERNEL = "__global__ void knn_kernel(const float* p, int* idx) { idx[0] = 0; }\n"


def _scan(root: Path, files: dict[str, str]):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


def test_an_import_of_the_projects_own_kernel_package_is_set_aside(tmp_path: Path) -> None:
    result = _scan(
        tmp_path / "repo",
        {
            "lib/setup.py": SETUP,
            "lib/knn_cuda/__init__.py": "from knn_cuda.knn import KNN\n",
            "lib/knn_cuda/knn.py": "from . import _ext\n\n\nclass KNN:\n    def __init__(self, k):\n        self.k = k\n",
            "lib/csrc/knn.cu": KERNEL,
            "model.py": MODEL,
        },
    )
    assert [f.rule for f in result.findings if f.rule == "DEP039"] == []
    aside = sorted((f.path, f.span.line, f.span.column, f.because[-1].to_dict()["rule"]) for f in result.set_aside if f.rule == "DEP039")
    assert aside == [("lib/knn_cuda/__init__.py", 1, 6, "set-aside.own-package"), ("model.py", 2, 6, "set-aside.own-package")]
    (one,) = [f for f in result.set_aside if f.rule == "DEP039" and f.path == "model.py"]
    assert one.because[-1].evidence == "`knn_cuda` is the project's own package, its compiled code in lib/csrc/knn.cu: its kernels are priced in the inventory"
    # the kernel itself, outside the package and named by the build, still prices the port
    assert [(f.rule, f.severity) for f in result.findings if f.rule == "CK003"] == [("CK003", "blocker")]


def test_a_cuda_source_inside_the_package_is_enough(tmp_path: Path) -> None:
    result = _scan(tmp_path / "repo", {"third/knn_cuda/__init__.py": "", "third/knn_cuda/csrc/knn.cu": KERNEL, "model.py": MODEL})
    assert [f.rule for f in result.findings if f.rule == "DEP039"] == []
    (aside,) = [f for f in result.set_aside if f.rule == "DEP039"]
    assert aside.because[-1].evidence.endswith("its compiled code in third/knn_cuda/csrc/knn.cu: its kernels are priced in the inventory")


def test_a_package_of_that_name_without_compiled_code_is_still_the_dependency(tmp_path: Path) -> None:
    # a thin wrapper package named like the CUDA-only one, with no kernel of its own
    result = _scan(tmp_path / "repo", {"third/knn_cuda/__init__.py": "from knn_cuda.knn import KNN\n", "third/knn_cuda/knn.py": "KNN = None\n", "model.py": MODEL})
    blockers = sorted((f.path, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule == "DEP039")
    assert ("model.py", 2, 6, "blocker") in blockers
    assert not [f for f in result.set_aside if f.rule == "DEP039"]


def test_a_package_in_a_submodule_still_prices_the_products_import(tmp_path: Path) -> None:
    # the kernels of a git submodule are priced apart: the product's import carries the cost
    result = _scan(
        tmp_path / "repo",
        {
            ".gitmodules": '[submodule "third_party/knn"]\n\tpath = third_party/knn\n\turl = https://example.com/knn.git\n',
            "third_party/knn/setup.py": SETUP,
            "third_party/knn/knn_cuda/__init__.py": "",
            "third_party/knn/csrc/knn.cu": KERNEL,
            "model.py": MODEL,
        },
    )
    assert [(f.path, f.span.line, f.severity) for f in result.findings if f.rule == "DEP039" and f.path == "model.py"] == [("model.py", 2, "blocker")]
    assert not [f for f in result.set_aside if f.rule == "DEP039"]
