"""torchvision's RoIAlign and deformable convolution, and detectron2's layers over them
(UO033), need a rewrite on device feature maps: a blocker that caps the grade at D as a
kernel does (blind set 38: DiffusionDet's ROIPooler, banded D, was A). Adversarial: NMS
(UO032) is a host detour, an edit, and caps nothing; a detectron2 layer that wraps no
compiled op (`Conv2d`, `ShapeSpec`) is no finding."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

HEAD = """\
import torch
from detectron2.layers import Conv2d, ShapeSpec, batched_nms
from detectron2.modeling.poolers import ROIPooler


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pooler = ROIPooler((7, 7), scales=(1 / 16,), sampling_ratio=2, pooler_type="ROIAlignV2")
        self.conv = Conv2d(256, 256, kernel_size=3, padding=1)

    def forward(self, features, boxes, scores, labels):
        keep = batched_nms(boxes, scores, labels, 0.5)
        return self.conv(self.pooler([features], [boxes[keep]]))
"""
TRAIN = """\
import torch
from head import Head


def main():
    model = Head()
    loss = model(torch.zeros(1, 256, 32, 32), None, None, None).sum()
    loss.backward()


if __name__ == "__main__":
    main()
"""


def _scan(root: Path):
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


def test_a_roi_pooler_on_the_main_path_caps_the_grade_at_d(tmp_path: Path) -> None:
    result = _scan(write_tree(tmp_path / "repo", {"head.py": HEAD, "train.py": TRAIN}))
    found = [(f.rule, f.path, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule in ("UO032", "UO033")]
    assert found == [("UO033", "head.py", 9, 23, "blocker"), ("UO032", "head.py", 13, 16, "blocker")]
    assert result.score.score == 59.9
    assert result.score.grade == "D"


def test_nms_alone_is_an_edit_and_caps_nothing(tmp_path: Path) -> None:
    head = HEAD.replace('        self.pooler = ROIPooler((7, 7), scales=(1 / 16,), sampling_ratio=2, pooler_type="ROIAlignV2")\n', "").replace("self.pooler([features], [boxes[keep]])", "features")
    result = _scan(write_tree(tmp_path / "repo", {"head.py": head, "train.py": TRAIN}))
    assert [(f.rule, f.severity) for f in result.findings if f.rule in ("UO032", "UO033")] == [("UO032", "blocker")]
    assert result.score.score > 59.9
