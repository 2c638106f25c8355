"""A folder with a manifest of its own is a project apart only when the product neither
imports nor builds it: a run-time build outside the folder that compiles its sources
(`load(sources=[join(parent, "cuda_rasterizer/forward.cu")])`) makes its kernels the
product's (audit BF: 4DGS's vendored rasterizer, read as nested, judged blockers).
Adversarial: with no such build the folder stays apart."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "__global__ void render_kernel(float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = 0.f;\n}\n"
LOADER = """\
import os

from torch.utils.cpp_extension import load

parent = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "raster")
_C = load(name="raster_ext", sources=[os.path.join(parent, "cuda_raster/forward.cu"), os.path.join(parent, "ext.cpp")])


def render(x):
    return _C.render(x)
"""
TRAIN = "import torch\nfrom renderer.ops import render\n\nprint(render(torch.ones(4)))\n"


def kernel_rows(root: Path, files: dict[str, str]) -> list[tuple[str, str, str]]:
    base = {
        "train.py": TRAIN,
        "renderer/__init__.py": "",
        "raster/setup.py": "from setuptools import setup\n\nsetup(name='raster')\n",
        "raster/cuda_raster/forward.cu": KERNEL,
        "raster/ext.cpp": "int main() { return 0; }\n",
    }
    write_tree(root, {**base, **files})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.path, f.severity, f.because[0].rule if f.because else "") for f in result.findings if f.rule == "CK003"]


def test_a_folder_the_product_compiles_at_run_time_is_the_product(tmp_path: Path) -> None:
    assert kernel_rows(tmp_path, {"renderer/ops.py": LOADER}) == [("raster/cuda_raster/forward.cu", "blocker", "")]


def test_a_folder_nothing_builds_stays_apart(tmp_path: Path) -> None:
    ops = "import torch\n\n\ndef render(x):\n    return x * 2\n"
    assert kernel_rows(tmp_path, {"renderer/ops.py": ops}) == [("raster/cuda_raster/forward.cu", "minor", "role.nested-project")]
