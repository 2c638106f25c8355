"""A `.cu` file no build compiles (analyze/unbuilt.py): audit AN found HRNet's
`lib/nms/gpu_nms.cu`, a near-copy beside the `nms_kernel.cu` its setup builds, reported as
a blocking kernel (judged false). Look-alikes keep their findings."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = "from setuptools import setup, Extension\n\nsetup(name='nms', ext_modules=[Extension('gpu_nms', ['nms_kernel.cu', 'gpu_nms.pyx'])])\n"
KERNEL = "__global__ void nms_kernel(const float *boxes, unsigned long long *mask) { mask[0] = 0; }\n"
USER = "import torch\nfrom nms.gpu_nms import gpu_nms\n\n\ndef run(dets):\n    return gpu_nms(dets, 0.5)\n"


def kernel_rows(root: Path, extra: dict[str, str] | None = None) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    files = {
        "nms/__init__.py": "",
        "nms/setup_linux.py": SETUP,
        "nms/nms_kernel.cu": KERNEL,
        "nms/gpu_nms.cu": KERNEL,
        "nms/gpu_nms.pyx": "# cython wrapper\n",
        "infer.py": USER,
        **(extra or {}),
    }
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    kept = {(f.path, f.rule) for f in result.findings if f.rule == "CK003"}
    aside = {(f.path, f.rule, f.because[-1].rule) for f in result.set_aside if f.rule == "CK003"}
    return kept, aside


def test_a_copy_no_build_lists_is_set_aside(tmp_path: Path) -> None:
    kept, aside = kernel_rows(tmp_path)
    assert kept == {("nms/nms_kernel.cu", "CK003")}
    assert aside == {("nms/gpu_nms.cu", "CK003", "set-aside.unbuilt-source")}


def test_a_source_another_includes_is_built(tmp_path: Path) -> None:
    """Adversarial: a unity build includes it."""
    kept, _ = kernel_rows(tmp_path, {"nms/nms_kernel.cu": KERNEL.replace("nms_kernel", "nms_main") + '#include "gpu_nms.cu"\n'})
    assert ("nms/gpu_nms.cu", "CK003") in kept


def test_a_source_a_cmake_file_names_is_built(tmp_path: Path) -> None:
    kept, _ = kernel_rows(tmp_path, {"CMakeLists.txt": "add_library(nms SHARED nms/gpu_nms.cu)\n"})
    assert ("nms/gpu_nms.cu", "CK003") in kept


def test_a_build_that_globs_its_folder_decides_nothing(tmp_path: Path) -> None:
    """Adversarial: the build takes every source of the folder."""
    setup = "import glob, os\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\nsetup(name='nms', ext_modules=[CUDAExtension('gpu_nms', glob.glob(os.path.join(here, 'nms')) + ['nms_kernel.cu'])])\n"
    kept, _ = kernel_rows(tmp_path, {"nms/setup_linux.py": setup})
    assert ("nms/gpu_nms.cu", "CK003") in kept


def test_a_module_of_the_same_name_builds_it_at_run_time(tmp_path: Path) -> None:
    """Adversarial: StyleGAN's `upfirdn2d.py` compiles `upfirdn2d.cu` from its own
    `__file__`, a name no text spells out."""
    loader = "import os\nfrom torch.utils.cpp_extension import load\n\n_ext = load('gpu_nms', [os.path.splitext(__file__)[0] + '.cu'])\n"
    kept, _ = kernel_rows(tmp_path, {"nms/gpu_nms.py": loader})
    assert ("nms/gpu_nms.cu", "CK003") in kept
