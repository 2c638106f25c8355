"""Read the shipped operator table (`rules/op-status.json`): what each target runs per op.

The table is generated (scripts/generate_op_table.py) from TorchTPU's and PyTorch/XLA's
dispatcher tables with composites resolved; this module only reads it, and knows no torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tpucheck.ruleset.loader import builtin_rules_dir

TABLE_NAME = "op-status.json"


class OpTableError(Exception):
    """The shipped table is missing or malformed: a broken installation."""


@dataclass(frozen=True, slots=True)
class OpStatus:
    """What one target runs for one operator."""

    op: str
    status: str
    """kernel, decomposed, missing, cpu-fallback or unknown."""
    via: tuple[str, ...] = ()
    note: str | None = None
    """Spelled out (the table's short codes expanded)."""

    @property
    def unsupported(self) -> bool:
        """Raises on TorchTPU or runs on the host on PyTorch/XLA."""
        return self.status in ("missing", "cpu-fallback")

    def describe(self) -> str:
        """`decomposed via aten::mm.out`, `missing`, `cpu-fallback (falls back when ...)`."""
        text = self.status
        if self.via:
            text += " via " + " -> ".join(self.via)
        if self.note:
            text += f" ({self.note})"
        return text


@dataclass(frozen=True, slots=True)
class OpTable:
    ops: dict[str, dict[str, dict[str, Any]]]
    notes: dict[str, str]
    sources: tuple[dict[str, str], ...]

    def status(self, op: str, target: str) -> OpStatus:
        """An op's status on `target`; ops outside the ATen tables (a project's own custom
        op, an op newer than the tables) are unknown."""
        entry = self.ops.get(op, {}).get(target)
        if entry is None:
            namespace = op.split("::", 1)[0]
            why = "not an ATen operator: a custom op needs a kernel for the target" if namespace != "aten" else f"not in the {target} table"
            return OpStatus(op, "unknown", note=why)
        note = entry.get("n")
        return OpStatus(op, str(entry["s"]), tuple(entry.get("via", ())), self.notes.get(note, note) if note else None)

    def provenance(self) -> list[dict[str, str]]:
        """The tables it was made from, with their versions and hashes, for every report."""
        return [dict(source) for source in self.sources]


def table_path() -> Path:
    return builtin_rules_dir() / TABLE_NAME


@lru_cache(maxsize=1)
def load_op_table(path: str | None = None) -> OpTable:
    source = Path(path) if path else table_path()
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
        return OpTable(ops=data["ops"], notes=dict(data.get("notes", {})), sources=tuple(data["sources"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OpTableError(f"cannot read the operator table {source}: {exc}") from None
