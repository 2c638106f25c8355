"""Code written for a torch older than TorchTPU's floor (2.11) that current torch refuses:
removed APIs (DEP032) and legacy autograd Functions (DEP033), with look-alikes that work."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def rows(root: Path, code: str) -> list[tuple[str, int, int, str, str]]:
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text(code, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.span.column, f.severity, f.because[-1].rule if f.because else "") for f in result.findings if f.rule in ("DEP032", "DEP033"))


def test_removed_apis_and_a_legacy_function_are_blockers(tmp_path: Path) -> None:
    code = """\
import torch
from torch._six import container_abcs
from torch.autograd import Function


class Detect(Function):
    def __init__(self, k):
        self.k = k

    def forward(self, scores):
        return scores.topk(self.k)[1]


def whiten(cov):
    values, vectors = torch.symeig(cov, eigenvectors=True)
    return vectors / values.sqrt()
"""
    assert rows(tmp_path, code) == [
        ("DEP032", 2, 6, "major", ""),
        ("DEP032", 15, 23, "major", ""),
        ("DEP033", 10, 9, "blocker", ""),
    ]


def test_new_style_functions_modules_and_guarded_imports_are_not_legacy(tmp_path: Path) -> None:
    """Adversarial: a static forward, an nn.Module's forward, a nested helper named forward
    inside a static method, and a `torch._six` import that falls back on ImportError."""
    code = """\
import torch
import torch.nn as nn

try:
    from torch._six import inf
except ImportError:
    from math import inf


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        def forward(y):
            return y * 2

        return forward(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class Twice(torch.autograd.Function):
    # audit AE: `Function.apply` binds a classmethod's cls; torch 2.13 runs it
    @classmethod
    def forward(cls, ctx, x):
        return x * 2


class Head(nn.Module):
    def forward(self, x):
        return x * inf
"""
    assert rows(tmp_path, code) == [("DEP032", 5, 10, "minor", "severity.guarded")]
