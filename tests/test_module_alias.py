"""A module bound to another name in a function (`np = numpy`) is still a module: its
attributes are its functions, never a tensor's methods (audit BB: zero123plus's
`np.nonzero(mask)` two lines under `np = numpy`, read as a device tensor's data-dependent
nonzero). Adversarial: a tensor bound to another name is still a tensor."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import numpy
import torch


def cut_out(mask_image):
    np = numpy
    mask = np.array(mask_image) > 0
    ys, xs = np.nonzero(mask)
    return ys.min(), xs.min()


def kept(scores: torch.Tensor):
    picked = scores > 0.5
    chosen = picked
    return chosen.nonzero()
"""


def test_a_module_alias_is_a_module_and_a_tensor_alias_a_tensor(tmp_path: Path) -> None:
    (tmp_path / "cut.py").write_text(CODE)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line, f.span.column) for f in result.findings] == [("DS014", 15, 19)]
