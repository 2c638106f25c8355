"""SciPy computes on the host (rules/contexts.yaml `host.modules`; audit AZ: ByteTrack's
`(M1 * M2).nonzero()` over two `scipy.sparse.coo_matrix`, read as a device tensor's
data-dependent nonzero). Adversarial: the same method on a torch tensor is still reported."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import numpy as np
import torch
from scipy.sparse import coo_matrix


def merge(m1, m2, shape):
    a = coo_matrix((np.ones(len(m1)), (m1[:, 0], m1[:, 1])), shape=shape)
    b = coo_matrix((np.ones(len(m2)), (m2[:, 0], m2[:, 1])), shape=shape)
    mask = a * b
    return mask.nonzero()


def keep(scores: torch.Tensor):
    return (scores > 0.5).nonzero()
"""


def test_a_scipy_matrix_is_host_data_and_a_tensor_is_not(tmp_path: Path) -> None:
    (tmp_path / "match.py").write_text(CODE)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings] == [("DS014", 14)]
