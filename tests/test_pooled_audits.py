"""Fixes for false findings that recur across the pooled audits J-W (docs/audits), each
with a probe that failed before the fix and an adversarial look-alike that must keep its
finding."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def rows(root: Path, text: str, rule: str) -> set[tuple[int, int, str]]:
    (root / "attn.py").write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.span.line, f.span.column, f.severity) for f in result.findings if f.rule == rule}


OWN_DTYPE = """\
import torch


def attend(scores, value):
    probs = torch.softmax(scores.float(), dim=-1)
    if value.dtype == torch.float16:
        probs = probs.to(torch.float16)
    if torch.half is value.dtype and value.is_contiguous():
        probs = probs.half()
    if value.dtype in (torch.float16, torch.bfloat16):
        probs = probs.to(value.dtype)
    return probs @ value
"""


def test_a_cast_back_to_an_operands_own_half_dtype_is_no_choice_of_fp16(tmp_path: Path) -> None:
    """Audits K, S and U (MeZO's OPT attention, Graphormer, yolov7's profiler): a cast to
    fp16 under a test that an operand is already fp16 follows that operand."""
    assert rows(tmp_path, OWN_DTYPE, "PR001") == set()


CHOSEN = """\
import torch


def attend(scores, value, half):
    probs = torch.softmax(scores.float(), dim=-1)
    if value.dtype != torch.float16:
        value = value.half()
    if value.dtype == torch.float32:
        probs = probs.to(torch.float16)
    if half:
        probs = probs.half()
    return probs @ value
"""


def test_a_cast_under_any_other_test_still_chooses_fp16(tmp_path: Path) -> None:
    """Adversarial: `!=`, another dtype, or a plain flag: the cast makes fp16 values that
    were not, so each is reported (minor on TorchTPU, whose AMP accepts fp16)."""
    assert rows(tmp_path, CHOSEN, "PR001") == {(7, 23, "minor"), (9, 23, "minor"), (11, 23, "minor")}


SWITCHES = """\
import torch
model.fit(objectives, epochs=1, use_amp=torch.cuda.is_available())
loader = DataLoader(data, pin_memory=torch.cuda.is_available())
with torch.autocast("cuda", enabled=torch.cuda.is_available()):
    pass
net = Net(use_cuda=torch.cuda.is_available())
state = torch.load(path, map_location=torch.cuda.is_available())
worker = Worker(gpu=torch.cuda.is_available(), device_ok=torch.cuda.is_available())
"""


def test_a_keyword_set_by_cudas_presence_switches_a_feature_unless_it_names_a_device(tmp_path: Path) -> None:
    # audit Y (sentence-transformers): `use_amp=torch.cuda.is_available()` turns CUDA-only
    # AMP off on a TPU host, no device pick; adversarial: `use_cuda=`, `map_location=`,
    # `gpu=`, `device_ok=` pick the device and stay reported
    assert rows(tmp_path, SWITCHES, "CA002") == {(6, 20, "major"), (7, 39, "major"), (8, 21, "major"), (8, 58, "major")}
