"""A factory without `device=` makes its tensor on the host (rules/contexts.yaml
`host.constructors`): `torch.triu_indices(n, n, 1)` runs `aten::triu_indices` on the CPU and
`torch.zeros(..., dtype=torch.complex128)` holds complex128 there (audit BC: deepchem's
orbital parameters and basis-change constant). Adversarial: the same factories given the
device of a tensor run there, and are reported."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import torch


def upper_pairs(params, n):
    rows, cols = torch.triu_indices(n, n, offset=1)
    placed = torch.triu_indices(n, n, offset=1, device=params.device)
    return params[..., rows, cols], placed


def basis(k, ref):
    host = torch.zeros(2 * k + 1, 2 * k + 1, dtype=torch.complex128)
    device = torch.zeros(2 * k + 1, 2 * k + 1, dtype=torch.complex128, device=ref.device)
    return host, device
"""


def test_a_factory_without_a_device_runs_on_the_host(tmp_path: Path) -> None:
    (tmp_path / "orbit.py").write_text(CODE)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings if f.rule in ("UO983", "PR003")] == [("UO983", 6), ("PR003", 12)]
