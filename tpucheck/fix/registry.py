"""The codemods, by the names rules use in YAML (catalog.py describes each)."""

from __future__ import annotations

from tpucheck.fix.accelerator import TorchAccelerator
from tpucheck.fix.base import Codemod
from tpucheck.fix.device import CurrentAccelerator
from tpucheck.fix.seed import ManualSeed

__all__ = ["CODEMOD_CLASSES", "make_codemods"]

CODEMOD_CLASSES: tuple[type[Codemod], ...] = (TorchAccelerator, ManualSeed, CurrentAccelerator)


def make_codemods() -> list[Codemod]:
    """Fresh instances for one file (a codemod may keep per-file state)."""
    return [cls() for cls in CODEMOD_CLASSES]
