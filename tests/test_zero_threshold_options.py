"""A setting compared with zero (`if cfg.depth_weight > 0:`) is a switch its zero default
leaves off: the term it turns on is an option (audit AZ: 4K4D's smooth-L1 depth loss under
`dpt_loss_weight > 0`, default 0.0, judged major). Any other threshold is a size, not a
switch: `world_size > 1` with a default of 1 keeps its blocker, and so does a weight whose
default is above zero."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

LOSSES = """\
import torch


def depth_term(pred, target):
    return torch.nn.functional.smooth_l1_loss(pred, target)
"""

TRAIN = """\
from dataclasses import dataclass

import torch

from pkg.losses import depth_term


@dataclass
class LossConfig:
    depth_weight: float = {default}
    world_size: int = 1


def total(cfg, pred, target):
    loss = (pred - target).abs().mean()
    if cfg.{setting} > {threshold}:
        loss = loss + torch.nn.functional.smooth_l1_loss(pred, target)
        loss = loss + depth_term(pred, target)
    return loss
"""


def _rows(tmp_path: Path, default: str, setting: str, threshold: str) -> list[tuple[str, int, str, str]]:
    train = TRAIN.format(default=default, setting=setting, threshold=threshold)
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/losses.py": LOSSES, "pkg/train.py": train})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [
        (f.path, f.span.line, f.severity, next((r.rule for r in f.because if r.rule in ("guard.option", "severity.option-only-component")), ""))
        for f in result.findings
        if f.rule == "UO978"
    ]


def test_a_term_switched_on_above_a_zero_default_is_an_option(tmp_path: Path) -> None:
    assert _rows(tmp_path, "0.0", "depth_weight", "0") == [
        ("pkg/losses.py", 5, "major", "severity.option-only-component"),
        ("pkg/train.py", 17, "major", "guard.option"),
    ]


@pytest.mark.parametrize(
    ("default", "setting", "threshold", "why"),
    [
        ("0.5", "depth_weight", "0", "a weight on by default"),
        ("0.0", "world_size", "1", "a size compared with one, not a switch"),
    ],
)
def test_a_threshold_the_default_passes_or_a_size_keeps_the_blocker(tmp_path: Path, default: str, setting: str, threshold: str, why: str) -> None:
    assert [row[:3] for row in _rows(tmp_path, default, setting, threshold)] == [("pkg/losses.py", 5, "blocker"), ("pkg/train.py", 17, "blocker")], why
