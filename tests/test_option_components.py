"""Classes and functions the product uses only behind an option its default leaves off
(analyze/option_components.py; audit AX: MACE's Chebyshev basis under `--radial_type
chebyshev`, Protenix's guidance potentials under `--use_tfg_guidance`, both blockers judged
major). A missing op inside one is at most major, with the test named. Look-alikes keep the
blocker: one use outside such a test, a use on the `else` side, a value the default takes,
a launch script that turns the option on, a name defined twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

ARGS = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--radial_type", type=str, default="bessel", choices=["bessel", "chebyshev"])
parser.add_argument("--use_guidance", action="store_true")
"""

BASES = """\
import torch


class BesselBasis(torch.nn.Module):
    def forward(self, x):
        return torch.sin(x)


class ChebyshevBasis(torch.nn.Module):
    def forward(self, x):
        return torch.special.chebyshev_polynomial_t(x, 3)


def guidance(x):
    return torch.special.chebyshev_polynomial_t(x, 2)
"""

BLOCK = """\
from pkg.bases import BesselBasis, ChebyshevBasis, guidance


class Block:
    def __init__(self, radial_type="bessel", use_guidance=False):
        if radial_type == "bessel":
            self.basis = BesselBasis()
        elif radial_type == "chebyshev":
            self.basis = ChebyshevBasis()
        else:
            raise ValueError(radial_type)
        self.use_guidance = use_guidance

    def step(self, x, args):
        if args.use_guidance:
            x = guidance(x)
        return self.basis(x)
"""


def _rows(tmp_path: Path, files: dict[str, str]) -> list[tuple[int, str, tuple[str, ...]]]:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/args.py": ARGS, "pkg/bases.py": BASES, "pkg/block.py": BLOCK, **files})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [
        (f.span.line, f.severity, tuple(r.evidence for r in f.because if r.rule == "severity.option-only-component"))
        for f in result.findings
        if f.path == "pkg/bases.py" and f.rule == "UO980"
    ]


def test_a_definition_used_only_behind_an_off_option_is_off_the_main_path(tmp_path: Path) -> None:
    assert _rows(tmp_path, {}) == [
        (
            11,
            "major",
            (
                "inside `ChebyshevBasis`, which the product uses only behind `radial_type == \"chebyshev\"` (`radial_type` is 'bessel' wherever"
                " the project sets it, pkg/args.py) at pkg/block.py:9: the default path never reaches it",
            ),
        ),
        (15, "major", ("inside `guidance`, which the product uses only behind `args.use_guidance` (`use_guidance` is off by default, pkg/args.py) at pkg/block.py:16: the default path never reaches it",)),
    ]


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ({"pkg/serve.py": "from pkg.bases import ChebyshevBasis, guidance\n\nBASIS = ChebyshevBasis()\nG = guidance\n"}, "a use outside any test"),
        ({"pkg/alt.py": "from pkg.bases import ChebyshevBasis, guidance\n\n\ndef pick(args):\n    if args.use_guidance:\n        return 1\n    else:\n        return ChebyshevBasis(), guidance\n"}, "a use on the else side"),
        ({"pkg/other.py": "from pkg.bases import ChebyshevBasis, guidance\n\n\ndef pick(radial_type, args):\n    if radial_type in ('bessel', 'chebyshev'):\n        return ChebyshevBasis(), guidance\n"}, "a value the default satisfies"),
        ({"pkg/copy.py": "class ChebyshevBasis:\n    pass\n\n\ndef guidance(x):\n    return x\n"}, "the names defined twice"),
        ({"scripts/run.sh": "python -m pkg.train --radial_type chebyshev --use_guidance\n"}, "a launch script turns both on"),
    ],
)
def test_a_definition_the_main_path_may_reach_keeps_its_blocker(tmp_path: Path, extra: dict[str, str], why: str) -> None:
    assert [row[:2] for row in _rows(tmp_path, extra)] == [(11, "blocker"), (15, "blocker")], why
