"""A flag the module itself declares is read from that declaration (audit BA: packnet-sfm's
`compute_depth_metrics(..., use_gt_scale=True)`, whose `if use_gt_scale:` runs
`torch.median` in every validation, was read as off by default because a side script
declares a store_true `--use_gt_scale`). Adversarial: the same test with the signature's
default False stays an option off by default (major), and a test of a setting the module
does not declare still takes the project's declaration."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
SCRIPT = 'import argparse\nfrom pkg.depth import metrics\n\np = argparse.ArgumentParser()\np.add_argument("--use_gt_scale", action="store_true")\nargs = p.parse_args()\nmetrics(None, None, use_gt_scale=args.use_gt_scale)\n'
DEPTH = "import torch\n\n\ndef metrics(gt, pred, {signature}):\n    if {test}:\n        pred = pred * torch.median(gt) / torch.median(pred)\n    return pred\n"


def _medians(tmp_path: Path, signature: str, test: str) -> list[tuple[int, int, str, tuple[str, ...]]]:
    root = write_tree(tmp_path / "repo", {"scripts/evaluate.py": SCRIPT, "pkg/__init__.py": "", "pkg/depth.py": DEPTH.format(signature=signature, test=test), "train.py": "from pkg.depth import metrics\n\nmetrics(1, 2)\n"})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "UO010"]


def test_a_flag_the_signature_turns_on_keeps_the_blocker(tmp_path: Path) -> None:
    assert _medians(tmp_path, "use_gt_scale=True", "use_gt_scale") == [(6, 23, "blocker", ()), (6, 42, "blocker", ())]


@pytest.mark.parametrize(
    ("signature", "test"),
    [("use_gt_scale=False", "use_gt_scale"), ("config=None", "config.use_gt_scale")],
    ids=["signature-off", "declared-elsewhere"],
)
def test_a_flag_off_by_default_is_an_option(tmp_path: Path, signature: str, test: str) -> None:
    assert [(severity, because[0]) for _, _, severity, because in _medians(tmp_path, signature, test)] == [("major", "guard.option"), ("major", "guard.option")]
