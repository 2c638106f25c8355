"""A port's total grows slower than its items' sum above 30 hours (`score.scale`: a large
port shares its set-up and what is learnt on the first items; blind bands grow as the 0.75
power of the summed items). The plan's steps keep their own sums, a small port is a plain
sum, and the scaled total still grows with every hour added."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.judge.score import Effort, Model
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
KERNEL = "__global__ void k{n}(float* x) {{ x[threadIdx.x] *= {n}.f; }}\n"


def test_the_constants_are_the_documented_ones() -> None:
    scoring = RULESET.judgement.scoring
    assert (scoring.scale_above, scoring.scale_exponent) == (30.0, 0.8)


@pytest.mark.parametrize(("summed", "total"), [(10.0, 10.0), (30.0, 30.0), (300.0, 189.3), (1000.0, 495.9)])
def test_hours_above_thirty_grow_as_the_power(summed: float, total: float) -> None:
    model = Model({r.id: r for r in RULESET.rules}, RULESET.judgement)
    assert round(model.scaled(summed), 1) == total


def test_the_scaled_total_never_falls_as_hours_rise() -> None:
    model = Model({r.id: r for r in RULESET.rules}, RULESET.judgement)
    hours = [h / 4 for h in range(4000)]
    scaled = [model.scaled(h) for h in hours]
    assert all(b >= a for a, b in itertools.pairwise(scaled))


def test_a_large_port_is_less_than_its_steps_and_a_small_one_is_their_sum(tmp_path: Path) -> None:
    files = {f"csrc/op{n}/kernel{n}.cu": KERNEL.format(n=n) for n in range(12)}
    files["model.py"] = "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n"
    big = scan(str(write_tree(tmp_path / "big", files)), RULESET, ScanOptions(jobs=1, use_cache=False)).score
    steps = Effort(sum(s.effort.low for s in big.plan if s.phase != "performance"), sum(s.effort.high for s in big.plan if s.phase != "performance"))
    summed = Effort.narrowed(steps.low, steps.high, 3.0)
    assert summed.high > 40
    assert (big.effort.low, big.effort.high) == pytest.approx(tuple(h if h <= 30 else 30 * (h / 30) ** 0.8 for h in (summed.low, summed.high)), rel=1e-3)
    small = scan(str(write_tree(tmp_path / "small", {"model.py": files["model.py"], "csrc/op0/kernel0.cu": KERNEL.format(n=0)})), RULESET, ScanOptions(jobs=1, use_cache=False)).score
    assert small.effort.high <= 30
    assert (small.effort.low, small.effort.high) == pytest.approx((sum(s.effort.low for s in small.plan if s.phase != "performance"), sum(s.effort.high for s in small.plan if s.phase != "performance")))
