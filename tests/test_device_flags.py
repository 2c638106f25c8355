"""A name bound to a device test inside a function is a flag (audit AW: Olive's
`use_cuda_sync = torch_device.type == "cuda"`, then `if use_cuda_sync:
torch.cuda.synchronize()`, read as an unguarded sync). The test it holds guards what it
turns on, as `if torch_device.type == "cuda":` would. Look-alikes keep their weight: a name
bound to the negated test, to a test of another device, or to a plain value."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import torch


def time_model(model, inputs, torch_device):
    use_cuda_sync = torch_device.type == "cuda"
    on_host = torch_device.type != "cuda"
    on_mps = torch_device.type == "mps"
    sync = True
    model(**inputs)
    if use_cuda_sync:
        torch.cuda.synchronize()
    if on_host:
        torch.cuda.synchronize()
    if on_mps:
        torch.cuda.synchronize()
    if sync:
        torch.cuda.synchronize()
"""


def test_a_name_bound_to_a_cuda_device_test_guards_what_it_turns_on(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/timing.py": CODE})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    rows = [(f.span.line, f.severity, f.guarded) for f in result.findings if f.rule == "CA001"]
    # adversarial: lines 13, 15 and 17 sit under a negated test, another device's test and
    # a plain value: unguarded
    assert rows == [(11, "minor", True), (13, "major", False), (15, "major", False), (17, "major", False)]
