"""A method a class selects by assignment in one branch only runs under that branch's
test (analyze/python/selected.py; audit BD: an HSIC estimator's `torch.trace` chosen only
with `algorithm="biased"`, judged major). Any other mention keeps it on the path."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = '''import torch


class Kernel:
    def __init__(self, sigma, algorithm="unbiased"):
        self.sigma = sigma
        if algorithm == "biased":
            self.estimator = self.biased_estimator
        else:
            self.estimator = self.unbiased_estimator

    def biased_estimator(self, k, l):
        return torch.trace(k @ l)

    def unbiased_estimator(self, k, l):
        return (k * l).sum()

    def __call__(self, k, l):
        return self.estimator(k, l)
'''
TRAIN = "import torch\nfrom hsic.kernel import Kernel\n\nk = Kernel(1.0)\nprint(k(torch.eye(3), torch.eye(3)))\n"

Row = tuple[str, str, int, str, tuple[tuple[str, str], ...]]


def rows(root: Path, kernel: str, train: str = TRAIN) -> list[Row]:
    write_tree(root, {"hsic/__init__.py": "", "hsic/kernel.py": kernel, "train.py": train})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted(
        (f.rule, f.path, f.span.line, f.severity, tuple((r.rule, r.evidence) for r in f.because)) for f in result.findings if f.rule.startswith("UO")
    )


def test_a_method_selected_only_under_an_option_is_under_its_test(tmp_path: Path) -> None:
    assert rows(tmp_path, KERNEL) == [
        (
            "UO981",
            "hsic/kernel.py",
            13,
            "major",
            (("guard.option", '`algorithm == "biased"` at hsic/kernel.py:7'), ("severity.fallback", "a fallback is kept: at most major")),
        )
    ]


def test_a_value_no_product_code_gives_selects_nothing_either(tmp_path: Path) -> None:
    """No declared default: the ungiven-value reading resolves the selection's test."""
    kernel = KERNEL.replace('algorithm="unbiased"', "algorithm=None")
    ((rule, _, line, severity, because),) = rows(tmp_path, kernel)
    assert (rule, line, severity, because[0][0]) == ("UO981", 13, "major", "guard.option")
    assert "no product module, config or launch script gives `'biased'`" in because[0][1]


def test_a_product_caller_that_gives_the_value_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: with no declared default, the product asks for `"biased"`."""
    kernel = KERNEL.replace('algorithm="unbiased"', "algorithm=None")
    train = TRAIN.replace("Kernel(1.0)", 'Kernel(1.0, algorithm="biased")')
    assert rows(tmp_path, kernel, train) == [("UO981", "hsic/kernel.py", 13, "blocker", ())]


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        # `__call__` calls it by name too
        ("return self.estimator(k, l)", "return self.estimator(k, l) + self.biased_estimator(k, l)", 13),
        # the else branch selects it as well, so every path does
        ("self.estimator = self.unbiased_estimator", "self.estimator = self.biased_estimator", 13),
        # an assignment under no test is the main path
        (
            '        if algorithm == "biased":\n            self.estimator = self.biased_estimator\n        else:\n            self.estimator = self.unbiased_estimator\n',
            "        self.estimator = self.biased_estimator\n",
            10,
        ),
        # any other mention (here a string for `getattr`) may select it
        ("    def __call__(self, k, l):", '    NAMES = ("biased_estimator",)\n\n    def __call__(self, k, l):', 13),
        # a decorator may register or wrap it; it is walked in place
        ("    def biased_estimator(self, k, l):", "    @staticmethod\n    def biased_estimator(k, l):", 14),
    ],
    ids=["called-directly", "selected-on-both-sides", "selected-unconditionally", "named-elsewhere", "decorated"],
)
def test_a_method_on_the_path_keeps_the_blocker(tmp_path: Path, old: str, new: str, line: int) -> None:
    """Adversarial: each shape keeps the method on the main path."""
    assert old in KERNEL
    assert rows(tmp_path, KERNEL.replace(old, new)) == [("UO981", "hsic/kernel.py", line, "blocker", ())]
