"""Git submodules are other repositories pinned inside this one (`.gitmodules`): their
findings are priced apart with the reason, not counted as the product's work. One the
product imports at load keeps its Python as product code; its native sources, that
dependency's own build, stay apart. Look-alikes keep their weight: the same folder with no
`.gitmodules` entry, and an entry pointing outside the tree."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.discover.submodules import parse_submodules
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

GITMODULES = """\
[submodule "third_party/rasterizer"]
\tpath = third_party/rasterizer
\turl = https://example.org/rasterizer.git
"""

KERNEL = "__global__ void splat_kernel(float* out) {}\n"


def scanned(root: Path, files: dict[str, str]) -> list[tuple[str, str, str, str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text))
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.rule, f.path, f.role, f.because[0].rule if f.because else "") for f in result.findings if f.rule in ("CK003", "CA003")]


def project(extra: dict[str, str], train: str = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n") -> dict[str, str]:
    return {
        "train.py": train,
        "third_party/rasterizer/setup.py": "print('build')\n",
        "third_party/rasterizer/raster/__init__.py": "import torch\nbuf = torch.zeros(1).cuda()\n",
        "third_party/rasterizer/csrc/splat.cu": KERNEL,
        **extra,
    }


def test_a_submodule_the_product_does_not_import_is_priced_apart(tmp_path: Path) -> None:
    rows = scanned(tmp_path, project({".gitmodules": GITMODULES}))
    assert rows == [
        ("CK003", "third_party/rasterizer/csrc/splat.cu", "experimental", "role.submodule"),
        ("CA003", "third_party/rasterizer/raster/__init__.py", "experimental", "role.submodule"),
        ("CA003", "train.py", "library", ""),
    ]


def test_a_submodule_imported_at_load_keeps_its_python_and_prices_its_build_apart(tmp_path: Path) -> None:
    train = "import torch\nfrom raster import buf\nmodel = torch.nn.Linear(2, 2).cuda()\n"
    rows = scanned(tmp_path, project({".gitmodules": GITMODULES}, train))
    assert rows == [
        ("CK003", "third_party/rasterizer/csrc/splat.cu", "experimental", "role.submodule"),
        ("CA003", "third_party/rasterizer/raster/__init__.py", "library", ""),
        ("CA003", "train.py", "library", ""),
    ]


def test_look_alikes_are_the_products_code(tmp_path: Path) -> None:
    # the same folder without a .gitmodules entry, imported: vendored by copy, the project's
    # own code (not imported, a folder with its own manifest is a project apart: test_audit_o)
    train = "import torch\nfrom raster import buf\nmodel = torch.nn.Linear(2, 2).cuda()\n"
    assert [row[2] for row in scanned(tmp_path / "copy", project({}, train))] == ["library", "library", "library"]
    outside = '[submodule "x"]\n\tpath = ../elsewhere\n\turl = u\n'
    assert parse_submodules(outside) == {}
    assert parse_submodules(GITMODULES + '[submodule "y"]\n\tpath = "vendor/y/"\n') == {
        "third_party/rasterizer": "https://example.org/rasterizer.git",
        "vendor/y": "",
    }


def test_the_cached_tree_follows_gitmodules(tmp_path: Path) -> None:
    # .gitmodules is not a scanned file, but the tree's facts depend on it: a rescan after
    # it changes (nothing else did) must not serve the old verdict.
    files = project({}, "import torch\nfrom raster import buf\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    def roles() -> list[str]:
        result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=True))
        return [f.role for f in result.findings if f.rule in ("CK003", "CA003")]

    assert roles() == ["library", "library", "library"]
    (tmp_path / ".gitmodules").write_text(GITMODULES)
    assert roles() == ["experimental", "library", "library"]  # imported at load: its Python is product, its build apart


def test_a_submodules_sources_the_products_build_compiles_are_the_products(tmp_path: Path) -> None:
    """Blind set 9 (nunchaku): the product's setup.py compiles a submodule's attention
    kernels into its own extension; those sources, and the headers they include, are the
    product's kernels. Adversarial: the submodule's other kernels stay apart."""
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('pkg._C', ['third_party/rasterizer/csrc/splat.cu'])])\n"
    )
    files = project(
        {
            ".gitmodules": GITMODULES,
            "setup.py": setup,
            "third_party/rasterizer/csrc/splat.cu": '#include "splat_impl.cuh"\n',
            "third_party/rasterizer/csrc/splat_impl.cuh": KERNEL,
            "third_party/rasterizer/csrc/other.cu": KERNEL,
        }
    )
    rows = [row for row in scanned(tmp_path, files) if row[0] == "CK003"]
    assert rows == [
        ("CK003", "third_party/rasterizer/csrc/other.cu", "experimental", "role.submodule"),
        ("CK003", "third_party/rasterizer/csrc/splat_impl.cuh", "library", ""),
    ]
