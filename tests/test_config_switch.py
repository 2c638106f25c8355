"""DeepSpeed picked by an Accelerate launch config alone (`distributed_type: DEEPSPEED`)
while the training code is Accelerate's own: switching the config to FSDP is an edit, so
the blocker carries `cap.config-switch` and does not cap the grade at D (blind set 47:
Show-o, banded B, was D by its ZeRO configs alone; set 41's Kolors the same). Adversarial:
a product module that imports DeepSpeed keeps the cap."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CONFIG = "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nnum_processes: 8\n"
TRAIN = """\
import torch
from accelerate import Accelerator


def main(model, optimizer, loader):
    accelerator = Accelerator(mixed_precision="bf16")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(batch).mean()
        accelerator.backward(loss)
        optimizer.step()
"""


def test_deepspeed_picked_by_a_launch_config_is_an_edit(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"train.py": TRAIN, "configs/zero2.yaml": CONFIG})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = [(f.rule, f.path, f.span.line, f.severity, tuple((r.rule, r.evidence) for r in f.because)) for f in result.findings if f.rule == "DEP005"]
    assert found == [
        (
            "DEP005",
            "configs/zero2.yaml",
            2,
            "major",
            (("cap.config-switch", "`distributed_type: DEEPSPEED` picks it in a launch config: switching the value is an edit, not a stack to port"),),
        )
    ]
    assert result.score.grade != "D"
    assert result.score.score > 59.9


def test_a_module_that_imports_deepspeed_keeps_the_cap(tmp_path: Path) -> None:
    train = TRAIN.replace("from accelerate import Accelerator\n", "from accelerate import Accelerator\nimport deepspeed\n")
    root = write_tree(tmp_path / "repo", {"train.py": train, "configs/zero2.yaml": CONFIG})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.path, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "DEP005"] == [
        ("configs/zero2.yaml", "major", ("cap.config-switch",)),
        ("train.py", "blocker", ()),
    ]
    assert result.score.score <= 59.9
