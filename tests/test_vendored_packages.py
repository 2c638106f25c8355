"""A vendored copy of a published CUDA package (its own setup.py and package folder:
VisionLLM's mmcv, blind set 44) is the package: its kernels are set aside, and the
product's imports of it are priced by the package's rules, as with the package installed.
Look-alikes keep their kernels."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "__global__ void roi_align_forward(float *out) { out[0] = 0; }\n"
SETUP = "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\nsetup(name='{name}', ext_modules=[CUDAExtension('{name}._ext', ['{name}/ops/csrc/roi_align_cuda.cu'])])\n"
MODEL = "import torch\nfrom {name}.ops import RoIAlign\n\n\ndef head(x, rois):\n    return RoIAlign((7, 7))(x, rois)\n"


def rows(root: Path, name: str, folder: str) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    files = {
        f"{folder}/setup.py": SETUP.format(name=name),
        f"{folder}/{name}/__init__.py": "",
        f"{folder}/{name}/ops/__init__.py": f"from {name}.ops.roi_align import RoIAlign\n",
        f"{folder}/{name}/ops/roi_align.py": f"import torch\nfrom {name} import _ext\n\n\nclass RoIAlign(torch.nn.Module):\n    def forward(self, x, rois):\n        return _ext.roi_align(x, rois)\n",
        f"{folder}/{name}/ops/csrc/roi_align_cuda.cu": KERNEL,
        "model/__init__.py": "",
        "model/head.py": MODEL.format(name=name),
    }
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    kept = {(f.rule, f.path) for f in result.findings if f.rule in ("CK003", "DEP036")}
    aside = {(f.rule, f.path, f.because[-1].rule) for f in result.set_aside if f.rule in ("CK003", "DEP036")}
    return kept, aside


def test_a_vendored_mmcv_is_priced_by_the_products_imports(tmp_path: Path) -> None:
    kept, aside = rows(tmp_path, "mmcv", "third_party/mmcv")
    assert ("DEP036", "model/head.py") in kept
    assert ("CK003", "third_party/mmcv/mmcv/ops/csrc/roi_align_cuda.cu", "set-aside.vendored-package") in aside
    assert not any(rule == "CK003" for rule, _ in kept)


def test_the_projects_own_kernel_package_keeps_its_kernels(tmp_path: Path) -> None:
    """Adversarial: a package of the project's own, under a name no rule prices."""
    kept, aside = rows(tmp_path, "detops", "third_party/detops")
    assert ("CK003", "third_party/detops/detops/ops/csrc/roi_align_cuda.cu") in kept
    assert not any(reason == "set-aside.vendored-package" for _, _, reason in aside)


FORK = {
    ".gitmodules": '[submodule "transformers"]\n\tpath = transformers\n\turl = ./transformers\n',
    "transformers/setup.py": "from setuptools import setup\nsetup(name='transformers', package_dir={'': 'src'})\n",
    "transformers/src/transformers/__init__.py": "from transformers.models.speech import SpeechModel\nfrom transformers.models.t5 import T5Model\n",
    "transformers/src/transformers/models/__init__.py": "",
    "transformers/src/transformers/models/speech.py": "import torch\n\n\nclass SpeechModel(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 2, 3))\n",
    "transformers/src/transformers/models/t5.py": "import torch\n\n\nclass T5Model(torch.nn.Module):\n    pass\n",
    "train.py": "import torch\nfrom transformers import T5Model\n\nmodel = T5Model()\nloss = model(torch.ones(2)).sum()\nloss.backward()\n",
}


def test_a_fork_of_transformers_in_the_src_layout_is_the_package(tmp_path: Path) -> None:
    """Blind set 79: CodeRL commits its fork of transformers 4.16 (named in .gitmodules, a
    plain tree); the blockers of speech models it never uses were read as the product's."""
    write_tree(tmp_path, FORK)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [f.rule for f in result.findings if f.path.startswith("transformers/")] == []
    assert {(f.rule, f.path, f.because[-1].rule) for f in result.set_aside if f.rule == "UO008"} == {
        ("UO008", "transformers/src/transformers/models/speech.py", "set-aside.vendored-package")
    }


def test_a_package_folder_without_its_setup_is_the_product(tmp_path: Path) -> None:
    """Adversarial: `src/transformers/` with no setup.py above it is the project's own code."""
    files = {k.replace("transformers/src/", "src/"): v for k, v in FORK.items() if k not in (".gitmodules", "transformers/setup.py")}
    write_tree(tmp_path, files)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.path) for f in result.findings if f.rule == "UO008"] == [("UO008", "src/transformers/models/speech.py")]
