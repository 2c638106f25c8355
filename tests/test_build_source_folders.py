"""Which folders a setup.py's extension build takes its sources from (analyze/imports.py
`_source_folders`): only those a listing call reads (`glob(path.join(extensions_dir,
"*.cu"))`), however `os.path.join` is spelt (`path.join`, `osp.join`). An include root it
joins for `include_dirs` (a template library kept as a git submodule: blind set 69's
stable-fast and its CUTLASS checkout) holds no sources of the build, so the submodule
stays priced apart."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.imports import extension_builds
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SETUP = """\
import glob
import os
from os import path

from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension


def extensions():
    here = path.dirname(path.abspath(__file__))
    extensions_dir = path.join(here, "src", "fastpkg", "csrc")
    sources = glob.glob(path.join(extensions_dir, "**", "*.cu"), recursive=True)
    tmpl_root = os.path.join(here, "third_party", "tmpl")
    tmpl_include = path.join(tmpl_root, "include")
    return [CUDAExtension("fastpkg._C", sources, include_dirs=[extensions_dir, tmpl_include])]


setup(name="fastpkg", ext_modules=extensions())
"""
KERNEL = "__global__ void {name}(float* x) {{ x[threadIdx.x] *= 2.f; }}\n"


def test_only_the_folder_a_glob_reads_is_a_source_folder() -> None:
    (build,) = extension_builds(SETUP)
    assert build.sources == ("src/fastpkg/csrc/",)


def test_osp_and_os_path_spellings_are_read_alike() -> None:
    for join in ("os.path.join", "osp.join"):
        text = (
            "import glob\nimport os\nimport os.path as osp\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
            "here = os.getcwd()\n"
            f'src_dir = {join}(here, "pkg", "kernels")\n'
            f'ext = CUDAExtension("pkg._ops", glob.glob({join}(src_dir, "*.cu")))\n'
        )
        (build,) = extension_builds(text)
        assert build.sources == ("pkg/kernels/",), join


def test_an_include_root_kept_as_a_submodule_stays_apart(tmp_path: Path) -> None:
    files = {
        "setup.py": SETUP,
        ".gitmodules": '[submodule "third_party/tmpl"]\n\tpath = third_party/tmpl\n\turl = https://example.com/tmpl.git\n',
        "src/fastpkg/__init__.py": "from fastpkg import _C\n",
        "src/fastpkg/csrc/scale.cu": KERNEL.format(name="scale_kernel"),
        "third_party/tmpl/include/tmpl/gemm.h": KERNEL.format(name="gemm_kernel"),
        "third_party/tmpl/lib/gemm.cu": "#include \"tmpl/gemm.h\"\n" + KERNEL.format(name="tile_kernel"),
    }
    result = scan(str(write_tree(tmp_path / "repo", files)), RULESET, ScanOptions(jobs=1, use_cache=False))
    kernels = {f.path: (f.severity, [r.rule for r in f.because]) for f in result.findings if f.rule == "CK003"}
    assert kernels["src/fastpkg/csrc/scale.cu"] == ("blocker", [])
    assert "role.submodule" in kernels["third_party/tmpl/lib/gemm.cu"][1]
