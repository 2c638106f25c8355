"""What blind set 29 (scripts/blind_set_29.json) showed, each with a probe that failed at
`2ec8124` and a look-alike that keeps its old reading.

restyle-encoder carries StyleGAN2's ops: `upfirdn2d_kernel` in CUDA beside
`upfirdn2d_native`, its plain-PyTorch version. A `*_native` function is a reference path
(CK015), so the kernel's port is priced at half (of a standard op's price: upfirdn2d is one,
rules/judgement.yaml `score.known_ops`, 0.4 of CK003's 5-15 h)."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "__global__ void upfirdn2d_kernel(float* out, const float* in, int n) {\n  out[0] = in[0];\n}\n"
OP = "import torch\n\n\ndef upfirdn2d(x, k):\n    return x\n\n\ndef upfirdn2d_native(x, k, up, down):\n    return torch.nn.functional.conv2d(x, k)\n"
OTHER = "import torch\n\n\ndef upfirdn2d(x, k):\n    return x\n\n\ndef use_native(flag):\n    return flag\n"


def _kernel_hours(tmp_path: Path, op: str) -> tuple[float, float]:
    (tmp_path / "op").mkdir(parents=True)
    (tmp_path / "op" / "upfirdn2d_kernel.cu").write_text(KERNEL)
    (tmp_path / "op" / "upfirdn2d.py").write_text(op)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (step,) = [s for s in result.score.plan if s.rule == "CK003"]
    return step.effort.low, step.effort.high


def test_a_native_twin_of_a_kernel_is_its_reference_path(tmp_path: Path) -> None:
    assert _kernel_hours(tmp_path, OP) == (1.0, 3.0)


def test_a_native_word_in_a_setting_is_no_reference(tmp_path: Path) -> None:
    assert _kernel_hours(tmp_path, OTHER) == (2.0, 6.0)
