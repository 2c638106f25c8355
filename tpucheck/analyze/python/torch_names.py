"""The names PyTorch's public modules define in the torch TorchTPU supports
(`rules/torch-names.json`, made by `scripts/torch_names.py` from torch itself).

Why: a `try` that only reads such names (`nan_to_num = torch.nan_to_num`, `from torch.amp
import autocast`) and an `except AttributeError`/`ImportError` that defines a stand-in is
a probe for an old torch: where the names exist, the handler never runs. Read once, on the
first probe a scan meets; most modules have none.
"""

from __future__ import annotations

import json
from functools import cache

from tpucheck.ruleset.loader import builtin_rules_dir

__all__ = ["known"]

TABLE_NAME = "torch-names.json"


@cache
def known() -> frozenset[str]:
    """Dotted names (`torch.nan_to_num`, `torch.cuda.amp.autocast`); empty when the table is
    missing or unreadable, so that no handler is ever read as dead without it."""
    try:
        data = json.loads((builtin_rules_dir() / TABLE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    found = data.get("names") if isinstance(data, dict) else None
    return frozenset(n for n in found if isinstance(n, str)) if isinstance(found, list) else frozenset()
