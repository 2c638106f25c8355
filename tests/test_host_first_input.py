"""An op whose first input is moved to the host runs there, whatever its other arguments
are (audit AR: scene_graph_benchmark's `torch.kthvalue(scores.flatten().cpu(), n -
self.max_num_attr + 1)`, a blocker judged false). Adversarial: the same op on a device
tensor and on an attribute nobody knows keep their findings."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import torch


def keep_top(scores, n, model):
    a, _ = torch.kthvalue(scores.flatten().cpu(), n - model.k + 1)
    b, _ = torch.kthvalue(scores.flatten(), n - model.k + 1)
    c, _ = torch.kthvalue(model.values, 3)
    return a, b, c
"""


def test_an_op_on_a_host_first_input_is_not_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"filters.py": CODE})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line, f.severity) for f in result.findings if f.rule == "UO944"] == [("UO944", 6, "blocker"), ("UO944", 7, "blocker")]
