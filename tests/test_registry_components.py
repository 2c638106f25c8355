"""Registered components that no config names (analyze/registry.py): a blocker inside one,
or at the import of a name only such components use, is major with its reason
(`severity.unreached-component`; audit AR: AdaMixer's unused mmdet heads). Adversarial: a
component a YAML config, a quoted Python config or plain code names keeps the blocker; a
project whose configs name no component at all keeps every blocker; a config naming a
longer word (`MyRegionHead`) does not name `RegionHead`; a use of the import outside the
component keeps it; `@atexit.register` and functools.singledispatch's `.register(Type)`
register no component."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.registry import registered_components
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

INIT = """\
from .used_head import QueryHead
from .rpn_head import RegionHead

__all__ = [
    'QueryHead',
    'RegionHead',
]
"""
USED = """\
import torch
from mmcv.ops import DeformConv2d
from mmdet.models.builder import HEADS


@HEADS.register_module()
class QueryHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = DeformConv2d(4, 4, 3)
"""
RPN = """\
import torch
from mmcv.ops import roi_align, DeformConv2d as DCN
from mmdet.models.builder import HEADS


@HEADS.register_module()
class RegionHead(torch.nn.Module):
    def __init__(self):
        super(RegionHead, self).__init__()
        self.conv = DCN(4, 4, 3)

    def forward(self, boxes, scores, idxs):
        return roi_align(boxes, scores, idxs, dict(iou_threshold=0.5))
"""
TRAIN = """\
import torch
from proj.heads import QueryHead


def main():
    head = QueryHead()
    head(torch.zeros(1)).sum().backward()


if __name__ == "__main__":
    main()
"""
CONFIG = "model = dict(type='Detector', head=dict(type='QueryHead'))\n"

REASON = "`{}` is used only by `RegionHead`, registered and named by no config or code of the project: the import runs at load, the op on no path the product runs"


def _tree(tmp_path: Path, **extra: str) -> Path:
    files = {"proj/__init__.py": "", "proj/heads/__init__.py": INIT, "proj/heads/used_head.py": USED, "proj/heads/rpn_head.py": RPN, "train.py": TRAIN, "configs/model.py": CONFIG}
    files.update(extra)
    return write_tree(tmp_path / "repo", {k: v for k, v in files.items() if v is not None})


def _dep036(root: Path) -> list[tuple[str, int, int, str, tuple[str, ...]]]:
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.path, f.span.line, f.span.column, f.severity, tuple(r.evidence for r in f.because if r.rule == "severity.unreached-component")) for f in result.findings if f.rule == "DEP036"]


def test_an_import_only_an_unnamed_component_uses_is_major(tmp_path: Path) -> None:
    assert _dep036(_tree(tmp_path)) == [
        ("proj/heads/rpn_head.py", 2, 22, "major", (REASON.format("roi_align"),)),
        ("proj/heads/rpn_head.py", 2, 33, "major", (REASON.format("DeformConv2d"),)),  # bound as DCN
        ("proj/heads/used_head.py", 2, 22, "blocker", ()),
    ]


def test_a_component_a_yaml_config_names_keeps_the_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"configs/rpn.yaml": "model:\n  head:\n    type: RegionHead\n"})
    assert [(p, s) for p, _, _, s, _ in _dep036(root)] == [("proj/heads/rpn_head.py", "blocker"), ("proj/heads/rpn_head.py", "blocker"), ("proj/heads/used_head.py", "blocker")]


def test_a_component_code_builds_keeps_the_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"tools/infer.py": "from proj.heads import RegionHead\n\nhead = RegionHead()\n"})
    assert [s for _, _, _, s, _ in _dep036(root)] == ["blocker", "blocker", "blocker"]


def test_a_project_whose_configs_name_no_component_keeps_every_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"configs/model.py": "model = dict(depth=50)\n"})
    assert [s for _, _, _, s, _ in _dep036(root)] == ["blocker", "blocker", "blocker"]


def test_a_longer_word_does_not_name_the_component(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"configs/other.py": "head = dict(type='MyRegionHead')\n"})
    assert [s for _, _, _, s, _ in _dep036(root)] == ["major", "major", "blocker"]


def test_a_use_outside_the_component_keeps_the_import(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"proj/heads/rpn_head.py": RPN + "\n\ndef suppress(boxes, scores, idxs):\n    return roi_align(boxes, scores, idxs, {})\n"})
    assert [(s, bool(why)) for _, _, _, s, why in _dep036(root)] == [("blocker", False), ("major", True), ("blocker", False)]


def test_a_registered_class_spans_its_decorator_to_its_body() -> None:
    text = "from mmdet.models.builder import HEADS\n\n\n@HEADS.register_module(name='Corner')\nclass CornerHead:\n    def f(self, x):\n        return x.cuda()\n\n\nx = 1\n"
    assert registered_components(text) == (("CornerHead", 4, 7, ("Corner",)),)


def test_atexit_and_singledispatch_register_no_component() -> None:
    text = (
        "import atexit\n\n\n@atexit.register\ndef bye():\n    pass\n\n\n"
        "@to_device.register(torch.Tensor)\ndef _(x):\n    return x.cuda()\n\n\n"
        "@ROI_HEADS_REGISTRY.register()\ndef build_head(cfg):\n    return 1\n"
    )
    assert registered_components(text) == (("build_head", 14, 16, ()),)
