"""A CUDA-only package a manifest lists that no product module imports is an entry to
delete (`severity.unused-package`): blind set 41's STTN ships a conda export listing CuPy
and PyCUDA that no line of its code imports. Look-alikes keep their blockers."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

TRAIN = "import torch\n\n\ndef step(model, x):\n    return model(x)\n"


def manifest_rows(root: Path, files: dict[str, str]) -> set[tuple[str, int, str, str]]:
    write_tree(root, {"requirements.txt": "numpy==1.26\ncupy-cuda12x==13.2.0\n", "train.py": TRAIN, **files})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.span.line, f.severity, f.because[-1].rule if f.because else "") for f in result.findings if f.rule == "DEP013"}


def test_a_listed_package_nothing_imports_is_an_entry_to_drop(tmp_path: Path) -> None:
    assert manifest_rows(tmp_path, {}) == {("requirements.txt", 2, "minor", "severity.unused-package")}


def test_its_hours_are_a_line_to_delete(tmp_path: Path) -> None:
    manifest_rows(tmp_path, {})
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    item = next(p for p in result.to_dict()["plan"] if p["rule"] == "DEP013")
    assert item["effort_hours"]["high"] <= 0.5


def test_a_listed_package_the_product_imports_stays_a_blocker(tmp_path: Path) -> None:
    """Adversarial: a module imports CuPy (even lazily, in a function)."""
    uses = "import torch\n\n\ndef to_gpu(x):\n    import cupy\n    return cupy.asarray(x)\n"
    rows = manifest_rows(tmp_path, {"ops.py": uses})
    assert ("requirements.txt", 2, "blocker", "") in rows


def test_an_import_only_in_tests_does_not_count(tmp_path: Path) -> None:
    """The product imports nothing of it; a test's import is the test's."""
    rows = manifest_rows(tmp_path, {"tests/test_gpu.py": "import cupy\n\ndef test_x():\n    assert cupy\n"})
    assert ("requirements.txt", 2, "minor", "severity.unused-package") in rows


def test_a_listed_package_every_import_of_which_keeps_a_fallback_is_an_entry_to_drop(tmp_path: Path) -> None:
    """Audit AQ (Bunny lists flash_attn in pyproject.toml; every import of it is under a
    `try` whose handler takes another path): dropping the line is the edit."""
    uses = "import numpy as np\ntry:\n    import cupy as xp\nexcept ImportError:\n    xp = np\n\n\ndef to_array(x):\n    return xp.asarray(x)\n"
    rows = manifest_rows(tmp_path, {"ops.py": uses})
    assert ("requirements.txt", 2, "minor", "severity.unused-package") in rows


def test_a_placeholder_import_still_needs_the_package(tmp_path: Path) -> None:
    """Adversarial: the handler binds None and the code calls it anyway."""
    uses = "try:\n    import cupy\nexcept ImportError:\n    cupy = None\n\n\ndef to_gpu(x):\n    return cupy.asarray(x)\n"
    rows = manifest_rows(tmp_path, {"ops.py": uses})
    assert ("requirements.txt", 2, "blocker", "") in rows


def test_a_package_only_a_nested_project_imports_is_an_entry_to_drop(tmp_path: Path) -> None:
    """Blind set 87: X-Mobility's requirements pin TensorRT, which only its ROS 2 node (a
    project of its own) imports: the product's manifest entry is no stack to port.
    Adversarial: the same pin with a product module importing the package stays a blocker."""
    nested = {
        "mob/__init__.py": "",
        "mob/net.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n",
        "train.py": "import torch\nfrom mob.net import Net\n\nnet = Net()\n",
        "deploy/node/requirements.txt": "cupy-cuda12x==13.2.0\n",
        "deploy/node/node.py": "import cupy\n\n\ndef run(x):\n    return cupy.asarray(x)\n",
    }
    rows = manifest_rows(tmp_path, nested)
    assert ("requirements.txt", 2, "minor", "severity.unused-package") in rows
    rows = manifest_rows(tmp_path, {**nested, "mob/ops.py": "import cupy\n\n\ndef to_gpu(x):\n    return cupy.asarray(x)\n"})
    assert ("requirements.txt", 2, "blocker", "") in rows
