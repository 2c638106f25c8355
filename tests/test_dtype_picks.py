"""A CUDA test that picks a precision, not a device (audit AM: NExT-GPT's embedding
scripts, `dtype = torch.float16 if torch.cuda.is_available() else torch.float32`, then
`from_pretrained(..., torch_dtype=dtype)`): the check is no device pick, and the fp16 it
passes on is on the CUDA side only. Look-alikes keep their findings."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SCRIPT = """\
import torch
from diffusers import StableDiffusionPipeline

dtype = {choice}


def main(name):
    return StableDiffusionPipeline.from_pretrained(name, torch_dtype=dtype)
"""


def rows(root: Path, choice: str, extra: str = "") -> set[tuple[str, int, str, str]]:
    (root / "embed.py").write_text(SCRIPT.format(choice=choice) + extra, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.rule, f.span.line, f.severity, f.because[0].rule if f.because else "") for f in result.findings}


def test_a_precision_picked_by_a_cuda_test_is_no_device_pick_and_its_fp16_is_guarded(tmp_path: Path) -> None:
    assert rows(tmp_path, "torch.float16 if torch.cuda.is_available() else torch.float32") == {("HF011", 8, "minor", "guard.test")}


def test_a_device_picked_by_the_same_test_is_still_a_device_pick(tmp_path: Path) -> None:
    """Adversarial: `"cuda" if ... else "cpu"` picks the device."""
    found = rows(tmp_path, "torch.float16", "\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert ("CA002", 10, "major", "") in found
    assert ("HF011", 8, "minor", "") in found


def test_a_precision_picked_by_an_option_keeps_the_option(tmp_path: Path) -> None:
    """Adversarial: a plain flag is no CUDA test; the fp16 arm runs wherever it is set."""
    found = rows(tmp_path, "torch.float16 if use_half else torch.float32")
    assert {(rule, line) for rule, line, _, _ in found} == {("HF011", 8)}
    assert ("HF011", 8, "minor", "guard.test") not in found


def test_a_name_bound_again_is_no_longer_the_choice(tmp_path: Path) -> None:
    """Adversarial: `dtype` rebound to fp16 outright before the call."""
    choice = "torch.float16 if torch.cuda.is_available() else torch.float32\ndtype = torch.float16"
    assert rows(tmp_path, choice) == {("HF011", 9, "minor", "")}


def test_a_test_that_hands_the_tpu_fp16_is_still_reported(tmp_path: Path) -> None:
    """Adversarial: without CUDA the script takes fp16, which a TPU should not compute in."""
    found = rows(tmp_path, "torch.bfloat16 if torch.cuda.is_available() else torch.float16")
    assert ("CA002", 4, "major", "") in found


PRECOND = """\
import torch


class Precond(torch.nn.Module):
    def __init__(self, model, use_fp16=True):
        super().__init__()
        self.model = model
        self.use_fp16 = use_fp16

    def forward(self, x, force_fp32=False):
        dtype = torch.float16 if (self.use_fp16 and not force_fp32 and x.device.type == "cuda") else torch.float32
        return self.model(x.to(dtype))

    def opted(self, x):
        dtype = torch.float16 if self.use_fp16 else torch.float32
        return self.model(x.to(dtype))

    def tpu_half(self, x):
        dtype = torch.float32 if x.device.type == "cuda" else torch.float16
        return self.model(x.to(dtype))
"""


def test_a_cast_to_a_dtype_a_cuda_test_picks_follows_its_arm(tmp_path: Path) -> None:
    """`x.to(dtype)` with `dtype = torch.float16 if (... x.device.type == "cuda") else
    torch.float32` casts a TPU tensor to fp32: a note (audits BC and BE: EDM's Precond,
    judged false as minors). Adversarial: an option on by default keeps the finding, and a
    test that hands the TPU the fp16 arm is reported at the test."""
    (tmp_path / "networks.py").write_text(PRECOND, encoding="utf-8")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line, f.severity, f.because[0].rule if f.because else "") for f in result.findings if f.rule in ("PR001", "DP010")] == [
        ("PR001", 12, "info", "guard.test"),
        ("PR001", 16, "minor", "guard.option-else"),
        ("DP010", 19, "minor", "where.rule"),
    ]
