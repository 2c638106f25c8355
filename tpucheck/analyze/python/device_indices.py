"""Whether a module addresses one CUDA device by index and no other: a device pick, not a
split of the work over devices.

Why: DP008 (manual multi-GPU placement, priced as a model-parallel port) read every
`"cuda:1"` as a stage of a model split by hand. tab-ddpm's scripts take
`device=torch.device("cuda:1")` as a parameter default and fall back to it when the config
names no device: one device, the author's second GPU, used for everything (blind set 76:
10-31 h of model-parallel work priced into a band of 5-16 h). A split needs at least two
devices in play: another index, or the default CUDA device (`.cuda()`, `"cuda"`) beside
the indexed one, or a count of the devices the code splits over.

Read from the module's text (comments and strings included, the safe side: a second
device named anywhere keeps the split reading).
"""

from __future__ import annotations

import re

__all__ = ["one_indexed_device"]

_INDEXED = re.compile(r"""cuda:(\d+)|\.cuda\(\s*(\d+)\s*\)|\bdevice\(\s*["']cuda["']\s*,\s*(\d+)\s*\)""")
_DEFAULT = re.compile(r"""["']cuda["'](?!\s*,\s*\d)|\.cuda\(\s*\)|\bdevice_count\(""")
"""The default CUDA device beside the indexed one, or a count of devices (`if
torch.cuda.device_count() > 1: x = x.to("cuda:1")`: a second GPU when there is one)."""


def one_indexed_device(text: str) -> bool:
    """One CUDA index other than 0 in the whole module, and no default CUDA device."""
    indices = {next(group for group in found.groups() if group is not None) for found in _INDEXED.finditer(text)}
    return len(indices) == 1 and indices != {"0"} and _DEFAULT.search(text) is None
