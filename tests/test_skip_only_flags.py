"""A module flag that only skip marks read (`gpu_available = torch.cuda.is_available() and
torch.cuda.device_count() > 0`, in a `try` whose handler sets it False, then `pytestmark =
pytest.mark.skipif(not gpu_available)`)
picks no device: it decides which tests run, as the query inside the mark would (audit
BC: deepchem's Lightning tests, three findings judged false). Adversarial: the same flag
also choosing a device is still reported."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SKIP_ONLY = """\
import pytest

try:
    import torch
    gpu_available = torch.cuda.is_available() and torch.cuda.device_count() > 0
except ImportError:
    gpu_available = False
pytestmark = pytest.mark.skipif(not gpu_available, reason="needs a GPU")


def test_trains():
    assert True
"""

PICKS = """\
import pytest
import torch

has_cuda = torch.cuda.is_available()
DEVICE = "cuda" if has_cuda else "cpu"


@pytest.mark.skipif(not has_cuda, reason="needs a GPU")
def test_trains():
    assert torch.zeros(1, device=DEVICE).sum() == 0
"""


def test_a_flag_only_skip_marks_read_is_no_device_pick(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_skip_only.py").write_text(SKIP_ONLY)
    (tmp_path / "tests" / "test_picks.py").write_text(PICKS)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.path, f.rule, f.span.line) for f in result.findings] == [("tests/test_picks.py", "CA002", 4), ("tests/test_picks.py", "CA003", 5)]
