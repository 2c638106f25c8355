"""The torch.accelerator table the package ships matches TorchTPU's wheel (issue 15): a
name the wheel's `torch.accelerator.__all__` lacks is never offered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpucheck.fix.surface import ACCELERATOR_SINCE, CUDA_TO_ACCELERATOR, counterpart
from tpucheck.fix.versions import Version, newest_allowed

SURFACE = Path(__file__).resolve().parents[2] / "shared" / "data" / "torchtpu" / "api_surface.json"


@pytest.mark.skipif(not SURFACE.exists(), reason=f"needs {SURFACE} (TorchTPU's API surface, in the shared data beside the checkout)")
def test_the_table_is_torch_accelerator_all() -> None:
    surface = json.loads(SURFACE.read_text())
    assert sorted(ACCELERATOR_SINCE) == sorted(surface["torch_accelerator_all"])
    for cuda_name, name in CUDA_TO_ACCELERATOR.items():
        assert name in surface["torch_accelerator_all"], cuda_name
    # no version is newer than the wheel's torch
    assert max(Version(v) for v in ACCELERATOR_SINCE.values()) <= Version(surface["torch"]["version"])


def test_every_mapped_name_has_a_version() -> None:
    for cuda_name in CUDA_TO_ACCELERATOR:
        assert counterpart(cuda_name) is not None
    assert counterpart("memory_summary") is None


@pytest.mark.parametrize(
    ("specs", "newest"),
    [
        ([">=2.1"], None),
        (["==2.4.1"], "2.4.1"),
        (["<2.6"], "2.5.999"),
        (["<=2.5,>=2.0"], "2.5"),
        (["~=2.4.0"], "2.4.999"),
        (["==2.4.*"], "2.4.999"),
        (["==2.3.1+cu121"], "2.3.1"),
        ([">=2.0", "<3"], "2.999"),
        (["2.4.*"], "2.4.999"),
    ],
)
def test_newest_allowed(specs: list[str], newest: str | None) -> None:
    found = newest_allowed(specs)
    assert (None if found is None else str(found)) == newest


def test_versions_compare_by_number() -> None:
    assert Version("2.10") > Version("2.9") and Version("2.6.0") == Version("2.6")
