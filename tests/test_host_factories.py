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


COVARIANCE = """\
import torch


def sampler_covariance(n, ref):
    a = torch.zeros(n, n, device="cpu")
    cov = a @ a.T + torch.eye(n)
    host = torch.linalg.cholesky(cov)
    b = torch.zeros(n, n, device=torch.device("cpu"))
    also = torch.linalg.cholesky(b @ b.T)
    c = torch.zeros(n, n, device=ref.device)
    placed = torch.linalg.cholesky(c @ c.T)
    d = torch.zeros(n, n, device="cpu").cuda()
    moved = torch.linalg.cholesky(d @ d.T)
    return host, also, placed, moved
"""


def test_a_factory_told_the_cpu_runs_on_the_host(tmp_path: Path) -> None:
    """`device="cpu"` and `torch.device("cpu")` name the host (audit BD: curobo's STOMP
    covariance, whose Cholesky runs once on the CPU). Adversarial: a tensor's device, or
    a host tensor sent to CUDA, is device data and its op is reported."""
    (tmp_path / "stomp.py").write_text(COVARIANCE)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line, f.severity) for f in result.findings if f.rule == "UO947"] == [("UO947", 11, "blocker"), ("UO947", 13, "blocker")]


HALF_TEST = """\
import torch


def test_force_fp32_casts():
    x = torch.ones(1, dtype=torch.half)
    y = torch.ones(1, dtype=torch.half, device="cuda")
    assert x.dtype == y.dtype


def make_buffer(n):
    return torch.zeros(n, dtype=torch.float16)
"""


def test_a_test_s_host_half_tensor_is_its_cpu_subject(tmp_path: Path) -> None:
    """A test function's fp16 tensor made on the host tests a dtype on the CPU (audits AR,
    BA, BD: mmcv's force_fp32 tests, judged false). Adversarial: the same factory told a
    device, and a product function's host fp16 buffer (moved later, as buffers are), are
    reported."""
    (tmp_path / "test_fp16.py").write_text(HALF_TEST)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings if f.rule == "PR001"] == [("PR001", 6), ("PR001", 11)]
