"""What blind set 28 (scripts/blind_set_28.json) showed no rule priced, each with a probe
that failed at `c563011` and a look-alike that keeps its old reading.

LSKNet (on MMRotate) imports rotated RoIAlign, rotated IoU and NMS and deformable
convolution from mmcv-full's compiled ops; the engineers priced each op family with its
numerics check. DEP036 reports each op imported and prices it once per name, however many
files import it."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

FILES = {
    "rotate/heads.py": "from mmcv.ops import nms_rotated, box_iou_rotated\n",
    "rotate/post.py": "from mmcv.ops.nms import nms_rotated\nfrom mmcv.cnn import ConvModule\n",
    "rotate/conv.py": "from mmcv.ops.deform_conv import DeformConv2d\n",
}


def test_each_mmcv_op_imported_is_its_own_finding_and_priced_once_per_name(tmp_path: Path) -> None:
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.path, f.span.line, f.span.column, f.severity, f.detail) for f in result.findings)
    assert found == [
        ("DEP036", "rotate/conv.py", 1, 34, "blocker", "mmcv.ops.deform_conv.DeformConv2d"),
        ("DEP036", "rotate/heads.py", 1, 22, "major", "mmcv.ops.nms_rotated"),  # NMS: a known edit
        ("DEP036", "rotate/heads.py", 1, 35, "blocker", "mmcv.ops.box_iou_rotated"),
        # the same op from its submodule: one more finding, no more work
        ("DEP036", "rotate/post.py", 1, 26, "major", "mmcv.ops.nms.nms_rotated"),
    ]
    # three ops at 3-8 h each, the two standard ones (NMS, deformable convolution) at the
    # standard-op factor 0.4 (rules/judgement.yaml `score.known_ops`): 1.2-3.2 + 3-8 + 1.2-3.2
    assert (result.score.effort.low, result.score.effort.high) == (5.4, 14.4)


def _hours(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, float, float]]:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((step.rule, step.effort.low, step.effort.high) for step in result.score.plan if step.rule.startswith("DEP"))


def test_a_splatting_rasteriser_sparse_convolution_and_knn_are_priced_as_the_bands_price_them(tmp_path: Path) -> None:
    # every blind band prices a Gaussian rasteriser as most of the port, a sparse
    # convolution backbone as a rewrite, a k-nearest-neighbour extension at a few hours
    files = {
        "render.py": "from diff_gaussian_rasterization import GaussianRasterizer\nfrom simple_knn._C import distCUDA2\n",
        "backbone.py": "import spconv.pytorch as spconv\n",
        "model.py": "import torch\nimport render, backbone\n",
    }
    assert _hours(tmp_path, files) == [("DEP037", 70.0, 210.0), ("DEP038", 40.0, 120.0), ("DEP039", 2.0, 6.0)]
