"""Triton kernel modules the product calls only on one side of a choice (analyze/chosen.py):
blind set 12's segment-anything-fast, whose Triton attention kernel has an SDPA sibling."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = """\
import torch
import triton
import triton.language as tl


@triton.jit
def _rel_attn_kernel(q_ptr, out_ptr, n):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(q_ptr + pid))


def fused_rel_attention(q, k, v):
    out = torch.empty_like(q)
    _rel_attn_kernel[(q.numel(),)](q, out, q.numel())
    return out
"""

CHOSEN = """\
import torch.nn.functional as F
from .fused import fused_rel_attention


def attend(q, k, v, use_rel_pos=True):
    if use_rel_pos:
        x = fused_rel_attention(q, k, v)
    else:
        x = F.scaled_dot_product_attention(q, k, v)
    return x


def attend_short(q, k, v, fast):
    return fused_rel_attention(q, k, v) if fast else F.scaled_dot_product_attention(q, k, v)
"""


def kernel_finding(root: Path, model: str, extra: dict[str, str] | None = None) -> tuple[str, tuple[str, ...]]:
    files = {"pkg/__init__.py": "", "pkg/fused.py": KERNEL, "pkg/model.py": model, **(extra or {})}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    (found,) = [f for f in result.findings if f.rule == "CK004"]
    return found.severity, tuple(r.rule for r in found.because)


def test_a_kernel_called_only_on_one_side_of_a_choice_keeps_the_other_side(tmp_path: Path) -> None:
    severity, because = kernel_finding(tmp_path, CHOSEN, {"tests/test_fused.py": "from pkg.fused import fused_rel_attention\n\nfused_rel_attention(1, 2, 3)\n"})
    assert (severity, because) == ("minor", ("fallback.chosen-call", "severity.kernel-fallback"))


@pytest.mark.parametrize(
    "model",
    [
        # a call on the main path beside the chosen one
        CHOSEN + "\n\ndef always(q, k, v):\n    return fused_rel_attention(q, k, v)\n",
        # the other side gives up
        "from .fused import fused_rel_attention\n\n\ndef attend(q, k, v, fast):\n    if fast:\n        return fused_rel_attention(q, k, v)\n    else:\n        raise ValueError('needs the fused kernel')\n",
        # both sides call into the kernel module
        "from .fused import fused_rel_attention\n\n\ndef attend(q, k, v, fast):\n    if fast:\n        return fused_rel_attention(q, k, v)\n    else:\n        return fused_rel_attention(k, q, v)\n",
        # an if with no other side
        "from .fused import fused_rel_attention\n\n\ndef attend(q, k, v, fast):\n    if fast:\n        q = fused_rel_attention(q, k, v)\n    return q\n",
        # the function passed on as a value
        "import torch.nn.functional as F\nfrom .fused import fused_rel_attention\n\nATTENTION = {'fused': fused_rel_attention, 'sdpa': F.scaled_dot_product_attention}\n",
        # the module imported whole
        "import pkg.fused\n\n\ndef attend(q, k, v, fast):\n    if fast:\n        return pkg.fused.fused_rel_attention(q, k, v)\n    else:\n        return q\n",
    ],
    ids=["main-path-call", "other-side-raises", "both-sides", "no-else", "as-value", "module-import"],
)
def test_a_kernel_the_product_needs_stays_a_blocker(tmp_path: Path, model: str) -> None:
    severity, because = kernel_finding(tmp_path, model)
    assert severity == "blocker" and "fallback.chosen-call" not in because
