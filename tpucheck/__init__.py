"""tpucheck: how ready is a PyTorch codebase to move from CUDA GPUs to TPUs.

    import tpucheck
    result = tpucheck.scan("path/to/repo")      # the result `tpucheck scan` reports

The API (`scan`, `load_settings`, `Settings`, `Flags`) is imported on first use, so that
`import tpucheck` for the version alone stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = ["Flags", "Settings", "__version__", "load_settings", "scan"]

if TYPE_CHECKING:
    from tpucheck.api import load_settings, scan
    from tpucheck.config.settings import Flags, Settings


def __getattr__(name: str) -> Any:
    if name in ("scan", "load_settings"):
        from tpucheck import api

        return getattr(api, name)
    if name in ("Settings", "Flags"):
        from tpucheck.config import settings

        return getattr(settings, name)
    raise AttributeError(f"module 'tpucheck' has no attribute {name!r}")
