"""A comprehension is a Python container, but it holds what its element is: host values
(`[v.item() for v in t]`, `[int(s) for s in sizes]`, `[x for x in np.arange(4)]`) or tensors
that may live on the device (`[torch.linspace(..., device=d) for n in sizes]`, `[to_device(a)
for a in arrays]`: DKM's grids and deepmd-kit's test inputs, whose fp64 casts read as host
data once the list itself was taken for host data)."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import numpy as np
import torch

from pkg.util import to_device


def device_grid(ref, n):
    axes = torch.stack([torch.linspace(-1, 1, k, device=ref.device) for k in (n, n)])
    return axes.double()


def moved(arrays):
    tensors = [to_device(a) for a in arrays]
    return tensors[0].double()


def host_values(t, sizes):
    values = torch.tensor([v.item() for v in t]).double()
    counts = torch.tensor([int(s) for s in sizes]).double()
    steps = torch.tensor([x for x in np.arange(4)]).double()
    return values, counts, steps
"""


def test_a_comprehension_holds_what_its_element_is(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "util.py").write_text("def to_device(a):\n    return a\n")
    (tmp_path / "pkg" / "grid.py").write_text(CODE)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings if f.rule == "PR002"] == [("PR002", 9), ("PR002", 14)]
