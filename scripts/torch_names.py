#!/usr/bin/env python3
"""List the names PyTorch's public modules define: `rules/torch-names.json`.

    python scripts/torch_names.py [--check]      (needs CPU torch: pip install torch==2.13.0)

Why: code written for old PyTorch probes for an API and defines its own when the probe
fails (`try: nan_to_num = torch.nan_to_num / except AttributeError: def nan_to_num(...):
... nansum ...`, copied from StyleGAN2-ADA into many repositories). On a torch that has
the name, which every torch TorchTPU supports does, the handler never runs: what it calls
is no work (audits M, V, BE: a `nansum` blocker in such a fallback, judged false). Which
names exist is read here from PyTorch itself; the list is committed and read at scan time
(analyze/python/torch_names.py) only when such a probe is found; nothing at scan time
imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import types
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "rules" / "torch-names.json"
COMMAND = "python scripts/torch_names.py"

MODULES = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.utils.parametrizations",
    "torch.linalg",
    "torch.fft",
    "torch.special",
    "torch.autograd",
    "torch.amp",
    "torch.cuda",
    "torch.cuda.amp",
    "torch.utils",
    "torch.utils.checkpoint",
    "torch.utils.data",
    "torch.distributed",
    "torch.backends",
    "torch.backends.cuda",
    "torch.backends.cudnn",
    "torch.jit",
    "torch.fx",
    "torch.testing",
    "torch.optim",
    "torch.optim.lr_scheduler",
)
"""The modules whose names old code probes for (`torch.nan_to_num`, `torch.linalg`,
`torch.cuda.amp.autocast`, `torch.nn.utils.parametrizations.weight_norm`)."""


def names() -> list[str]:
    """Every `module.name` the listed modules define, and the modules themselves. A
    submodule is an attribute only once something imported it, so submodules are left out
    (the list would depend on import order); those listed above are in."""
    found: set[str] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        found.add(module_name)
        found.update(
            f"{module_name}.{name}" for name in dir(module) if not name.startswith("__") and not isinstance(getattr(module, name, None), types.ModuleType)
        )
    return sorted(found)


def render(found: list[str], version: str) -> str:
    return json.dumps({"generated_by": COMMAND, "torch": version, "modules": list(MODULES), "names": found}, indent=0) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed list differs")
    args = parser.parse_args(argv)
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    import torch

    version = torch.__version__.split("+", 1)[0]
    text = render(names(), version)
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT} is stale: run {COMMAND}")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(json.loads(text)['names'])} names, torch {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
