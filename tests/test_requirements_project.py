"""A folder with a requirements file of its own whose modules never import the root's
packages, and that nothing outside imports or runs, is another project kept in the
repository (judge/entrypoints.py `nested_projects`; blind set 78: Sparsebit's
`large_language_models/alpaca-qlora`, a QLoRA project with CUDA kernels that never
imports `sparsebit`). A demo importing the product stays with it."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

FILES = {
    "setup.py": "from setuptools import setup\nsetup(name='qkit', packages=['qkit'])\n",
    "qkit/__init__.py": "from qkit.observe import observe\n",
    "qkit/observe.py": "import torch\n\n\ndef observe(x):\n    return x.abs().max()\n",
    "llm/qlora/requirements.txt": "torch\ntransformers\n",
    "llm/qlora/finetune.py": "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n",
}


def rows(root: Path, extra: dict[str, str]) -> list[tuple[str, str, str, str]]:
    write_tree(root, {**FILES, **extra})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.path, f.role, f.because[0].rule if f.because else "") for f in result.findings if f.path.startswith("llm/"))


def test_a_project_with_its_own_requirements_is_apart(tmp_path: Path) -> None:
    assert rows(tmp_path, {}) == [("CA003", "llm/qlora/finetune.py", "experimental", "role.nested-project")]


def test_a_demo_that_imports_the_product_stays_with_it(tmp_path: Path) -> None:
    """Adversarial: the folder's script imports `qkit`."""
    demo = "import torch\nfrom qkit import observe\n\nmodel = torch.nn.Linear(2, 2).cuda()\nprint(observe(model.weight))\n"
    found = rows(tmp_path, {"llm/qlora/finetune.py": demo})
    assert [(rule, path, role) for rule, path, role, _ in found] == [("CA003", "llm/qlora/finetune.py", "library")]


def test_a_folder_imported_as_a_namespace_package_is_the_products(tmp_path: Path) -> None:
    """Audit BD: RVT's `libs/point-renderer` (its own setup.py) holds `point_renderer/`
    with no `__init__.py`; `from point_renderer.rvt_renderer import ...` in the model imports it."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='mvt', packages=['mvt'])\n",
        "mvt/__init__.py": "",
        "mvt/model.py": "def build(use_points):\n    if use_points:\n        from point_renderer.render import Renderer\n        return Renderer()\n",
        "libs/point-renderer/setup.py": "from setuptools import setup\nsetup(name='point_renderer')\n",
        "libs/point-renderer/point_renderer/render.py": "import torch\n\n\nclass Renderer:\n    def __init__(self):\n        self.grid = torch.zeros(2).cuda()\n",
    }
    write_tree(tmp_path, files)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.path, f.role) for f in result.findings if f.path.startswith("libs/")] == [("CA003", "libs/point-renderer/point_renderer/render.py", "library")]


def test_scripts_side_by_side_with_no_product_package_stay_the_product(tmp_path: Path) -> None:
    """Adversarial (blind set 74: DiffuLLaMA's `DiffuLLaMA-training/`, its own requirements
    beside root inference scripts): with no package at the root there is nothing to set it
    apart from."""
    files = {
        "requirements.txt": "torch\n",
        "infer.py": "import torch\n\nmodel = torch.nn.Linear(2, 2)\n",
        "training/requirements.txt": "torch\nflash-attn\n",
        "training/train.py": "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n",
    }
    write_tree(tmp_path, files)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.path, f.role) for f in result.findings if f.path.startswith("training/") and f.rule == "CA003"] == [("CA003", "training/train.py", "library")]
