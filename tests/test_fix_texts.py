"""Advice names only public APIs that exist.

Every rule's message and fixes are read; a private module (`_internal`) fails, and so does
a `torch.tpu.*` name that TorchTPU's public surface (read from its wheel into
`../shared/data/torchtpu/api_surface.json`) does not export, or a `torch.accelerator.*`
name absent from torch's `torch.accelerator.__all__`. Where the shared data is absent the
name checks skip; the `_internal` check always runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tpucheck.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parent.parent
SURFACE = ROOT.parent / "shared" / "data" / "torchtpu" / "api_surface.json"
NAME = re.compile(r"\btorch\.(tpu|accelerator)((?:\.[A-Za-z_]\w*)*)")


def _texts() -> list[tuple[str, str]]:
    out = []
    for rule in load_ruleset().rules:
        out.append((f"{rule.id} message", rule.message))
        out.append((f"{rule.id} fix.tpu", rule.fix_tpu))
        if rule.fix_xla:
            out.append((f"{rule.id} fix.xla", rule.fix_xla))
    return out


def _surface() -> dict:
    if not SURFACE.is_file():
        pytest.skip(f"TorchTPU API surface not present at {SURFACE}")
    return json.loads(SURFACE.read_text(encoding="utf-8"))


def unknown_names(text: str, modules: dict[str, list[str]], accelerator: list[str]) -> list[str]:
    """The `torch.tpu.*` / `torch.accelerator.*` names in `text` that the surface lacks."""
    bad = []
    for found in NAME.finditer(text):
        parts = ["torch", found.group(1), *[p for p in found.group(2).split(".") if p]]
        if found.group(1) == "accelerator":
            if len(parts) < 3 or parts[2] not in accelerator:
                bad.append(found.group(0))
            continue
        # the longest public module that prefixes the name, then one exported name in it
        for end in range(len(parts), 1, -1):
            module = ".".join(parts[:end])
            if module in modules:
                if end < len(parts) and parts[end] not in modules[module]:  # a public module itself is fine
                    bad.append(found.group(0))
                break
        else:
            bad.append(found.group(0))
    return bad


def test_no_advice_names_a_private_module() -> None:
    bad = [f"{where}: {text}" for where, text in _texts() if "_internal" in text]
    assert bad == []


def test_every_torch_tpu_and_accelerator_name_exists() -> None:
    surface = _surface()
    modules, accelerator = surface["public_modules"], surface["torch_accelerator_all"]
    bad = [f"{where}: {name}" for where, text in _texts() for name in unknown_names(text, modules, accelerator)]
    assert bad == []


def test_the_name_check_can_fail() -> None:
    modules = {"torch.tpu": ["synchronize", "Precision"], "torch.tpu.pallas": ["jax_op"]}
    accelerator = ["synchronize", "empty_cache"]
    text = (
        "`torch.tpu.synchronize()`, `torch.tpu.pallas.jax_op`, `torch.tpu.Precision.HIGHEST`, "
        "`torch.accelerator.empty_cache()`; wrong: `torch.tpu.empty_cache()`, `torch.tpu.pallas.kernel`, "
        "`torch.accelerator.mem_get_info()`; fine: the module `torch.tpu` itself"
    )
    assert unknown_names(text, modules, accelerator) == [
        "torch.tpu.empty_cache",
        "torch.tpu.pallas.kernel",
        "torch.accelerator.mem_get_info",
    ]
