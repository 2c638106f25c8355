"""Record every operator a phase reaches, where the user's code reached it, and the host
syncs and data-dependent shapes among them. Child side: imports torch.

A `TorchDispatchMode` sees each ATen call after autograd and the CompositeImplicitAutograd
decompositions, i.e. the operators a backend is asked to run. The user's line is the
innermost frame outside torch, the standard library and tpucheck; in the backward pass,
where no user frame is on the stack, it is the forward line that made the autograd node
(anomaly mode keeps that traceback on the node).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections import Counter
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

IGNORED_NAMESPACES = frozenset({"prim", "profiler"})
"""Not operators a backend runs: device queries, profiler markers."""
HOST_SYNC_OPS = frozenset({"aten::_local_scalar_dense"})


def op_name(func: Any) -> str:
    """`aten::addmm`, `aten::add.Tensor`: the dispatcher's spelling, as the tables key it."""
    schema = func._schema
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


def _skipped_roots() -> tuple[tuple[str, ...], str | None]:
    """torch's, tpucheck's and their helpers' folders, and the standard library's."""
    import tpucheck

    roots = [os.path.dirname(torch.__file__), os.path.dirname(tpucheck.__file__)]
    for name in ("functorch", "torchgen"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            roots.append(os.path.dirname(str(module.__file__)))
    stdlib = sysconfig.get_paths().get("stdlib")
    return tuple(os.path.realpath(root) + os.sep for root in roots), (os.path.realpath(stdlib) + os.sep if stdlib else None)


_THIRD_PARTY = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


@dataclass
class OpRecord:
    count: int = 0
    on_device: int = 0
    """Calls with a tensor on the traced device among inputs or outputs; the rest ran on
    host data only (an optimizer's step counter) and no backend would be asked."""
    sites: Counter[tuple[str, int, str]] = field(default_factory=Counter)
    """(path, line, stage) -> calls."""
    unattributed: Counter[str] = field(default_factory=Counter)
    """stage -> calls with no user frame (the optimizer's step, the default loss)."""


@dataclass
class Event:
    kind: str
    """host-sync, dynamic-shape or graph-break."""
    op: str | None
    path: str | None
    line: int | None
    stage: str
    detail: str
    count: int = 1


class Recorder(TorchDispatchMode):
    def __init__(self, device_type: str) -> None:
        super().__init__()
        self.device_type = device_type
        self.ops: dict[str, OpRecord] = {}
        self.events: dict[tuple[str, str | None, str | None, int | None, str], Event] = {}
        self.stage = "forward"
        self._roots, self._stdlib = _skipped_roots()
        self._user_file: dict[str, bool] = {}

    # where -----------------------------------------------------------------
    def is_user_file(self, filename: str) -> bool:
        known = self._user_file.get(filename)
        if known is None:
            real = os.path.realpath(filename)
            in_stdlib = self._stdlib is not None and real.startswith(self._stdlib) and not any(part in real for part in _THIRD_PARTY)
            known = not filename.startswith("<") and not real.startswith(self._roots) and not in_stdlib
            self._user_file[filename] = known
        return known

    def site(self) -> tuple[str, int] | None:
        """The innermost user frame: live for the forward pass, the autograd node's
        recorded forward traceback for the backward pass."""
        node = torch._C._current_autograd_node()
        if node is not None:
            return self._node_site(node)
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            if self.is_user_file(frame.f_code.co_filename):
                return frame.f_code.co_filename, frame.f_lineno
            frame = frame.f_back
        return None

    def _node_site(self, node: Any) -> tuple[str, int] | None:
        try:
            stack = node.metadata.get("traceback_")
        except (AttributeError, RuntimeError):
            return None
        for entry in reversed(stack or ()):
            head = str(entry).strip().splitlines()[0] if str(entry).strip() else ""
            if head.startswith('File "') and '", line ' in head:
                filename, _, rest = head[len('File "') :].partition('", line ')
                line = rest.split(",", 1)[0]
                if line.isdigit() and self.is_user_file(filename):
                    return filename, int(line)
        return None

    # what ------------------------------------------------------------------
    def _on_device(self, values: Any) -> bool:
        flat, _ = tree_flatten(values)
        return any(isinstance(v, torch.Tensor) and v.device.type == self.device_type for v in flat)

    def event(self, kind: str, op: str | None, site: tuple[str, int] | None, detail: str) -> None:
        path, line = site if site else (None, None)
        key = (kind, op, path, line, self.stage)
        if key in self.events:
            self.events[key].count += 1
        else:
            self.events[key] = Event(kind, op, path, line, self.stage, detail)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = op_name(func)
        if name.split("::", 1)[0] in IGNORED_NAMESPACES:
            return func(*args, **kwargs)
        on_device = self._on_device((args, kwargs))
        site = self.site()
        record = self.ops.setdefault(name, OpRecord())
        record.count += 1
        if on_device and (name in HOST_SYNC_OPS or torch.Tag.data_dependent_output in getattr(func, "tags", ())):
            self.event("host-sync", name, site, "copies a value to the host: the step waits for the device")
        try:
            out = func(*args, **kwargs)
        finally:
            if site is not None:
                record.sites[(site[0], site[1], self.stage)] += 1
            else:
                record.unattributed[self.stage] += 1
        if not on_device:
            on_device = self._on_device(out)
        if on_device:
            record.on_device += 1
            why = _dynamic_shape(func, args, out)
            if why:
                self.event("dynamic-shape", name, site, why)
        return out


def _dynamic_shape(func: Any, args: Any, out: Any) -> str | None:
    """Why the op's output shape depends on the data, or None."""
    if torch.Tag.dynamic_output_shape in getattr(func, "tags", ()):
        return "its output's shape depends on the data"
    if op_name(func).startswith("aten::index") and any(
        isinstance(t, torch.Tensor) and t.dtype == torch.bool for t in tree_flatten(args[1:] if isinstance(args, tuple) else args)[0]
    ):
        return "indexing with a boolean mask: the output's shape depends on the data"
    for value in tree_flatten(out)[0]:
        if isinstance(value, torch.Tensor):
            try:
                from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

                if free_unbacked_symbols(value):
                    return "its output's shape depends on the data"
            except Exception:
                return None
    return None
