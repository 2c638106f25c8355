"""A TensorRT deployment around a PyTorch product (blind sets 70 and 71: D-FINE's and
YOLOv6's TensorRT tools, rf-detr's deploy requirements): a script that imports the
project's engine module drives the engine too (analyze/deploy.py), and a manifest that
lists the engine, imported only by such scripts and by modules the product loads
optionally, is an entry to drop, not a blocker (`severity.unused-package`). Adversarial: a
script with no engine beside it stays the product; an import of the engine by a product
module keeps the manifest's blocker."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

FILES = {
    "detector/__init__.py": "",
    "detector/model.py": "import torch\n\n\nclass Detector(torch.nn.Module):\n    pass\n",
    "train.py": "import torch\nfrom detector.model import Detector\n\nif __name__ == '__main__':\n    Detector()(torch.zeros(1)).sum().backward()\n",
    "deploy/trt_runner.py": "import tensorrt as trt\n\n\nclass Runner:\n    def __init__(self, plan):\n        self.logger = trt.Logger()\n",
    # the deployment drives the product's model (a deploy folder whose code never imports the
    # product, with its own requirements file, is a project apart: tests/test_requirements_project.py)
    "deploy/eval_trt.py": "from trt_runner import Runner\nfrom detector.model import Detector\n\nif __name__ == '__main__':\n    Runner('model.plan')\n",
    "deploy/requirements.txt": "tensorrt==10.0.1\npycuda\n",
}


def _found(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, str], tuple[str, tuple[str, ...]]]:
    result = scan(str(write_tree(tmp_path / "repo", files)), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.rule, f.path): (f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "DEP008"}


def test_a_script_over_the_engine_module_and_its_manifest_are_the_deployment(tmp_path: Path) -> None:
    found = _found(tmp_path, FILES)
    assert "alternative.engine-deploy" in found[("DEP008", "deploy/trt_runner.py")][1]
    assert found[("DEP008", "deploy/requirements.txt")] == ("minor", ("severity.unused-package",))


def test_a_product_module_importing_the_engine_keeps_the_manifest_blocker(tmp_path: Path) -> None:
    files = {**FILES, "detector/export.py": "import tensorrt as trt\n\n\ndef build(onnx):\n    return trt.Builder(trt.Logger())\n"}
    assert _found(tmp_path, files)[("DEP008", "deploy/requirements.txt")] == ("blocker", ())


def test_the_only_entry_point_driving_the_engine_is_the_product(tmp_path: Path) -> None:
    files = {k: v for k, v in FILES.items() if k.startswith("deploy/")}
    found = _found(tmp_path, files)
    assert "alternative.engine-deploy" not in found[("DEP008", "deploy/trt_runner.py")][1]
