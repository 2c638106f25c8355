"""An op class imported from a CUDA-only package and read only as an `isinstance` class
runs none of its kernels (audits AM and AO: SoftTeacher's and qdtrack's `from mmcv.ops
import RoIPool`, judged false as blockers; qdtrack's alone graded it D). Look-alikes keep
their blockers."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

HOOKS = """\
import torch
from mmcv.ops import RoIPool, DeformConv2d as DCN


def freeze(model):
    for m in model.modules():
        if isinstance(m, (RoIPool, torch.nn.BatchNorm2d)):
            m.eval()
    return {BODY}
"""


def rows(root: Path, body: str) -> set[tuple[str, str, str]]:
    (root / "hooks.py").write_text(HOOKS.replace("{BODY}", body), encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.detail or "", f.severity, f.because[0].rule if f.because else "") for f in result.findings if f.rule == "DEP036"}


def test_an_op_class_only_checked_with_isinstance_is_a_note(tmp_path: Path) -> None:
    found = rows(tmp_path, "issubclass(type(model), DCN)")
    assert ("mmcv.ops.RoIPool", "info", "guard.type-only") in found
    assert ("mmcv.ops.DeformConv2d", "info", "guard.type-only") in found


def test_an_op_class_the_module_builds_stays_a_blocker(tmp_path: Path) -> None:
    """Adversarial: the same module also calls the class (builds the layer)."""
    found = rows(tmp_path, "DCN(16, 16, 3)")
    assert ("mmcv.ops.DeformConv2d", "blocker", "") in {(d, s, "" if r != "guard.type-only" else r) for d, s, r in found}
    assert ("mmcv.ops.RoIPool", "info", "guard.type-only") in found
