"""The codemods, by the names rules use in YAML (catalog.py describes each)."""

from __future__ import annotations

from tpucheck.fix.accelerator import TorchAccelerator
from tpucheck.fix.autocast import Autocast
from tpucheck.fix.backend import DefaultBackend
from tpucheck.fix.base import Codemod
from tpucheck.fix.config_values import CODEMOD as CONFIG_CODEMOD
from tpucheck.fix.device import CurrentAccelerator
from tpucheck.fix.grad_scaler import GradScaler
from tpucheck.fix.hf_bf16 import HfBf16
from tpucheck.fix.hf_device_map import HfDeviceMap
from tpucheck.fix.hf_sdpa import HfSdpa
from tpucheck.fix.legacy import LegacyTensor
from tpucheck.fix.seed import ManualSeed

__all__ = ["CODEMOD_CLASSES", "TEXT_CODEMODS", "make_codemods"]

CODEMOD_CLASSES: tuple[type[Codemod], ...] = (
    TorchAccelerator,
    ManualSeed,
    CurrentAccelerator,
    Autocast,
    GradScaler,
    DefaultBackend,
    HfDeviceMap,
    HfSdpa,
    HfBf16,
    LegacyTensor,
)


TEXT_CODEMODS: tuple[str, ...] = (CONFIG_CODEMOD,)
"""Codemods of config files, edited as text (config_values.py), not with libcst."""


def make_codemods() -> list[Codemod]:
    """Fresh instances for one file (a codemod may keep per-file state)."""
    return [cls() for cls in CODEMOD_CLASSES]
