"""The README's first command scans the bundled demo: it must show every category, the
kernel and package inventory, the suppression, and none of the demo's precision traps."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import CATEGORIES
from tpucheck.ruleset import load_ruleset

DEMO = Path(__file__).resolve().parent.parent / "examples" / "gpu-trainer"


@pytest.fixture(scope="module")
def demo():
    return scan(str(DEMO), load_ruleset(), ScanOptions(jobs=1))


def test_demo_covers_every_category_without_errors(demo) -> None:
    assert demo.errors == []
    assert {f.category for f in demo.findings} == set(CATEGORIES)
    # custom kernels and CUDA-only packages with known replacements: D
    assert demo.score.grade == "D"


def test_demo_inventory_names_kernels_and_packages(demo) -> None:
    kernels = {(k.rule, k.name) for k in demo.inventory.kernels}
    assert {("CK003", "bias_gelu_forward_kernel"), ("CK003", "bias_gelu_backward_kernel"), ("CK004", "_row_softmax_kernel"), ("CK001", "gpu_trainer._fused_ops")} <= kernels
    packages = {p.name for p in demo.inventory.packages}
    assert {"flash-attn", "apex", "bitsandbytes", "deepspeed", "xformers"} <= packages


def test_demo_exact_findings_in_the_training_loop(demo) -> None:
    train = {(f.rule, f.span.line) for f in demo.findings if f.path == "gpu_trainer/train.py"}
    for expected in [("DI001", 99), ("CA004", 100), ("CA005", 102), ("CA003", 109), ("CA015", 123), ("CA014", 136), ("CA001", 152)]:
        assert expected in train
    assert ("HS001", 150) not in train  # eager TorchTPU: the loss's `.item()` syncs as on the GPU


def test_demo_traps_are_not_flagged(demo) -> None:
    utils = [(f.rule, f.span.line) for f in demo.findings if f.path == "gpu_trainer/utils.py"]
    assert all(line not in (3, 4, 44, 45) for _, line in utils), utils  # docstring and a local named `cuda`
    comment = [f for f in demo.findings if f.path == "csrc/fused_gelu.cu" and f.span.line == 3]
    assert comment == []
    assert [(s.rule, s.path, s.span.line, s.suppression_reason) for s in demo.suppressed] == [
        ("CA007", "gpu_trainer/utils.py", 40, "measured: harmless on TPU")
    ]


def test_demo_notebook_findings_carry_cells(demo) -> None:
    notebook = sorted((f.rule, f.cell, f.span.line) for f in demo.findings if f.path == "notebooks/explore.ipynb")
    assert ("DEP002", 2, 1) in notebook
    assert ("CA001", 4, 5) in notebook
