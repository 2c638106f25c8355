"""A module that imports a CUDA-only inference engine at its top is that engine's
integration (rules/judgement.yaml `cuda_engines`): the engine's own finding prices its
replacement, and the module's other CUDA-isms are set aside with that reason, never
dropped. Look-alikes that keep their findings: a lazy import inside a function, a project
module that shares the engine's name, a non-CUDA part of the same toolkit."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

RUNNER = """\
{imports}
import torch


def build(model):
    model = model.cuda()
    torch.cuda.empty_cache()
    return model
"""


def scanned(root: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text))
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


def test_an_engines_module_is_set_aside_apart_from_the_engine(tmp_path: Path) -> None:
    result = scanned(tmp_path, {"pkg/__init__.py": "", "pkg/trt_runner.py": RUNNER.format(imports="import tensorrt as trt\nfrom cuda import cudart")})
    assert [(f.rule, f.span.line, f.severity) for f in result.findings if f.path == "pkg/trt_runner.py"] == [
        ("DEP008", 1, "blocker"),
        ("DEP021", 2, "blocker"),
    ]
    aside = [(f.rule, f.span.line, f.because[-1].rule, f.because[-1].evidence) for f in result.set_aside]
    why = "`tensorrt` imported at the top of pkg/trt_runner.py: the module drives a CUDA-only engine and is replaced with it"
    assert aside == [("CA003", 7, "set-aside.cuda-engine", why), ("CA007", 8, "set-aside.cuda-engine", why)]


@pytest.mark.parametrize(
    "files",
    [
        # a lazy import: the module has other work than the engine's
        {"pkg/__init__.py": "", "pkg/runner.py": RUNNER.format(imports="def engine():\n    import tensorrt\n    return tensorrt")},
        # the project's own module of that name
        {"pkg/__init__.py": "", "tensorrt.py": "X = 1\n", "pkg/runner.py": RUNNER.format(imports="import tensorrt")},
        # Polygraphy's ONNX tools are not its CUDA backend
        {"pkg/__init__.py": "", "pkg/runner.py": RUNNER.format(imports="from polygraphy.backend.onnx import fold_constants")},
    ],
    ids=["lazy", "own-module", "onnx-part"],
)
def test_look_alikes_keep_their_findings(tmp_path: Path, files: dict[str, str]) -> None:
    result = scanned(tmp_path, files)
    assert [f.rule for f in result.findings if f.path == "pkg/runner.py" and f.rule in ("CA003", "CA007")] == ["CA003", "CA007"]
    assert not [f for f in result.set_aside if f.path == "pkg/runner.py" and f.because[-1].rule == "set-aside.cuda-engine"]


TRAIN = "import torch\nfrom pkg.model import Net\n\nif __name__ == '__main__':\n    Net()\n"
EXPORT = "import tensorrt as trt\nimport torch\nfrom calibrator import Calibrator\nfrom pkg.model import Net\n\nif __name__ == '__main__':\n    trt.Builder(trt.Logger())\n"
CALIBRATOR = "import pycuda.driver as cuda\nimport tensorrt as trt\n\n\nclass Calibrator(trt.IInt8EntropyCalibrator2):\n    pass\n"
PRODUCT = {"pkg/__init__.py": "", "pkg/model.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n", "train.py": TRAIN}


def engine_rows(root: Path, files: dict[str, str]) -> set[tuple[str, str, str, str]]:
    result = scanned(root, files)
    return {(f.path, f.rule, f.severity, f.because[-2].rule if len(f.because) > 1 else "") for f in result.findings if f.rule in ("DEP008", "DEP013")}


def test_a_deployment_script_nothing_imports_is_an_alternative(tmp_path: Path) -> None:
    """Blind set 37 (fast-reid, in sample): `tools/deploy/trt_export.py` and the calibrator
    only it imports drive TensorRT; the product trains and runs in PyTorch without them."""
    rows = engine_rows(tmp_path, {**PRODUCT, "deploy/trt_export.py": EXPORT, "deploy/calibrator.py": CALIBRATOR})
    assert rows == {
        ("deploy/trt_export.py", "DEP008", "minor", "alternative.engine-deploy"),
        ("deploy/calibrator.py", "DEP013", "minor", "alternative.engine-deploy"),
        ("deploy/calibrator.py", "DEP008", "minor", "alternative.engine-deploy"),
    }


def test_when_every_entry_point_drives_the_engine_it_is_the_product(tmp_path: Path) -> None:
    """Adversarial: a TensorRT serving repository has no other way in."""
    files = {"pkg/__init__.py": "", "pkg/model.py": PRODUCT["pkg/model.py"], "deploy/trt_export.py": EXPORT, "deploy/calibrator.py": CALIBRATOR}
    assert {severity for _, _, severity, _ in engine_rows(tmp_path, files)} == {"blocker"}


def test_an_engine_module_the_product_imports_stays_on_the_path(tmp_path: Path) -> None:
    """Adversarial: the training script imports the calibrator, so the engine is used."""
    train = TRAIN.replace("from pkg.model import Net\n", "from pkg.model import Net\nfrom deploy.calibrator import Calibrator\n")
    rows = engine_rows(tmp_path, {**PRODUCT, "train.py": train, "deploy/__init__.py": "", "deploy/trt_export.py": EXPORT, "deploy/calibrator.py": CALIBRATOR})
    assert ("deploy/calibrator.py", "DEP008", "blocker", "") in {(p, r, s, b if b.startswith("alternative") else "") for p, r, s, b in rows}
