"""`from .op import upfirdn2d` takes the name the package's `__init__` binds, not the
submodule of that name (audit AT: ml-gsn's `models/op/__init__.py` imports `upfirdn2d` from
its CUDA module under a try whose handler takes the native one; the submodule read as an
entry point made its kernels blockers). Adversarial: a package whose `__init__` binds
nothing of that name, and `from . import sub` (the submodule itself), keep the submodule."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "__global__ void blur_kernel(float *y) { y[0] = 0; }\n"
OP = "import os\nfrom torch.utils.cpp_extension import load\n\nblur_op = load('blur', sources=[os.path.join(os.path.dirname(__file__), 'blur.cpp'), os.path.join(os.path.dirname(__file__), 'blur_kernel.cu')])\n\n\ndef blur(x):\n    return blur_op.blur(x)\n"
NATIVE = "import torch.nn.functional as F\n\n\ndef blur(x):\n    return F.avg_pool2d(x, 3, 1, 1)\n"
INIT = "try:\n    from .blur import blur\nexcept Exception:\n    from .native_ops import blur\n"
LAYERS = "import torch\nfrom .op import blur\n\n\nclass Smooth(torch.nn.Module):\n    def forward(self, x):\n        return blur(x)\n"


def kernel_severities(root: Path, init: str) -> list[str]:
    write_tree(
        root,
        {
            "train.py": "from models.layers import Smooth\n\nSmooth()\n",
            "models/__init__.py": "",
            "models/layers.py": LAYERS,
            "models/op/__init__.py": init,
            "models/op/blur.py": OP,
            "models/op/native_ops.py": NATIVE,
            "models/op/blur.cpp": "#include <torch/extension.h>\n",
            "models/op/blur_kernel.cu": KERNEL,
        },
    )
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [f.severity for f in result.findings if f.rule == "CK003"]


def test_a_name_the_package_binds_under_a_fallback_keeps_the_kernel_optional(tmp_path: Path) -> None:
    assert kernel_severities(tmp_path / "repo", INIT) == ["minor"]


def test_the_submodule_itself_keeps_the_kernel_required(tmp_path: Path) -> None:
    assert kernel_severities(tmp_path / "repo", "from . import blur\n") == ["blocker"]
