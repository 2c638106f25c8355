"""Resolve every ATen operator to what a backend runs for it: the generator's logic.

The dispatcher tables read from TorchTPU and PyTorch/XLA (`shared/data/torchtpu/coverage/`)
say, per operator, whether the backend registers a kernel, falls into its catch-all
(TorchTPU raises, PyTorch/XLA runs it on the CPU), or leaves it to PyTorch's composite
implementation. A composite is covered only when what it decomposes into is, so each one is
followed through `native_functions.yaml`: its `structured_delegate`, its out= variant, its
in-place or functional twin, the per-tensor op of a `_foreach_` loop, the view behind a
`_copy` variant. What is left (a view, or a generic composite whose parts no table lists) is
decomposed and assumed covered, and says so.

Importable without torch, so that `scripts/generate_op_table.py` and the unsupported-op rule
pack generator share one resolver.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

STATUSES: tuple[str, ...] = ("kernel", "decomposed", "missing", "cpu-fallback", "unknown")
"""kernel: the backend's own kernel. decomposed: a composite whose parts are covered (or a
view, or a generic composite assumed covered: `assumed`). missing: TorchTPU's catch-all,
which raises by default. cpu-fallback: PyTorch/XLA runs it on the host (a device-to-host
copy and a graph break each time). unknown: no table lists it."""

KERNEL_KINDS = {"tpu_kernel", "xla_kernel", "kernel_other"}
MISSING_KINDS = {"tpu_missing_fallback": "missing", "xla_cpu_fallback": "cpu-fallback", "fallback_other": "missing"}
COMPOSITE_KINDS = {"composite_implicit", "composite_explicit"}

NOTES: dict[str, str] = {
    "implicit": "CompositeImplicitAutograd: decomposed above the backend, which sees only its parts",
    "traced": "CompositeImplicitAutograd, whose parts were traced on CPU torch (rules/implicit-ops.json): it raises where one of them raises",
    "view": "a view: metadata only, no kernel",
    "generic": "assumed covered: PyTorch's generic composite, whose parts no table lists",
}
"""Short codes for the notes most ops share, spelled out once in the table's header."""


@dataclass(frozen=True, slots=True)
class Status:
    """What one backend runs for one operator."""

    status: str
    via: tuple[str, ...] = ()
    """The operators it was resolved through, outermost first (empty for a kernel)."""
    note: str | None = None
    """A code of NOTES, or a condition worth knowing (`falls back to the CPU when ...`)."""
    autograd: bool = False
    """The backend registers its own gradient for the op: PyTorch's backward ops for it
    (`native_layer_norm_backward`) never reach that backend."""

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"s": self.status}
        if self.via:
            data["via"] = list(self.via)
        if self.note:
            data["n"] = self.note
        if self.autograd:
            data["ag"] = True
        return data


@dataclass(frozen=True, slots=True)
class NativeFunction:
    """One entry of native_functions.yaml, reduced to what resolution needs."""

    name: str
    """`aten::base.overload` (no overload for the default one), the tables' spelling."""
    base: str
    arguments: tuple[str, ...]
    """Non-out arguments, normalized (`Tensor self`, `int dim`)."""
    is_out: bool
    structured_delegate: str | None
    tags: tuple[str, ...]
    is_view: bool
    """Returns an alias of an input (`Tensor(a)`) without writing to it: metadata only."""
    has_dispatch: bool


_FUNC = re.compile(r"^(?P<name>[\w.]+)\((?P<args>.*)\)\s*->\s*(?P<ret>.*)$")


def _split_args(text: str) -> list[str]:
    depth, start, parts = 0, 0, []
    for index, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _normal_arg(arg: str) -> str:
    """`Tensor(a!) self` -> `Tensor self`; defaults dropped: the signature's shape only."""
    arg = arg.split("=", 1)[0].strip()
    return re.sub(r"\([a-z*!\s\->|]+\)", "", arg)


def parse_native_functions(entries: list[Mapping[str, object]]) -> dict[str, NativeFunction]:
    """`aten::name.overload` -> its entry, from native_functions.yaml loaded as a list."""
    out: dict[str, NativeFunction] = {}
    for entry in entries:
        found = _FUNC.match(str(entry["func"]))
        if not found:
            continue
        full = found.group("name")
        base = full.split(".", 1)[0]
        raw_args = [a for a in _split_args(found.group("args")) if a != "*"]
        out_args = [a for a in raw_args if "!)" in a.split(" ", 1)[0] and a.split(" ", 1)[-1] != "self"]
        args = tuple(_normal_arg(a) for a in raw_args if a not in out_args)
        raw_tags = entry.get("tags") or ()
        tags = (raw_tags,) if isinstance(raw_tags, str) else tuple(str(t) for t in raw_tags) if isinstance(raw_tags, list | tuple) else ()
        ret = found.group("ret")
        mutates = any("!" in a.split(" ", 1)[0] for a in raw_args)
        delegate = entry.get("structured_delegate")
        out["aten::" + full] = NativeFunction(
            name="aten::" + full,
            base=base,
            arguments=args,
            is_out=bool(out_args) and base[-1:] != "_",
            structured_delegate=("aten::" + str(delegate)) if delegate else None,
            tags=tags,
            is_view=bool(re.match(r"^\(?Tensor\([a-z](\s*->\s*\*)?\)", ret)) and not mutates,
            has_dispatch="dispatch" in entry or bool(delegate),
        )
    return out


_CYCLE = "cycle"
_CONCLUSIVE = ("kernel", "missing", "cpu-fallback")


@dataclass
class Resolver:
    """Resolves operators for one target against its table."""

    target: str
    table: Mapping[str, str]
    """`aten::name.overload` -> the table's kind."""
    functions: Mapping[str, NativeFunction]
    xla_conditional: Mapping[str, str] = field(default_factory=dict)
    """Base name -> condition text, for PyTorch/XLA kernels that fall back inside (`always
    ...` makes them CPU fallbacks outright)."""
    autograd: frozenset[str] = frozenset()
    """Ops the backend differentiates itself (the tables' `*_autograd`)."""
    implicit: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Composite-implicit op -> the ops its decomposition dispatches, traced on CPU torch
    (`scripts/trace_implicit.py`)."""
    _memo: dict[str, Status] = field(default_factory=dict)
    _by_base: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in sorted(set(self.table) | set(self.functions)):
            self._by_base.setdefault(name.split("::", 1)[1].split(".", 1)[0], []).append(name)

    def resolve(self, op: str) -> Status:
        if op not in self._memo:
            self._memo[op] = Status("unknown", note=_CYCLE)  # breaks cycles (t -> t_ -> t)
            resolved = self._resolve(op)
            self._memo[op] = replace(resolved, autograd=True) if op in self.autograd else resolved
        return self._memo[op]

    def _resolve(self, op: str) -> Status:
        kind = self.table.get(op)
        if kind is None:
            nf = self.functions.get(op)
            if nf is not None and not nf.has_dispatch:
                return self._implicit(op)
            return Status("unknown", note=f"not in the {self.target} table")
        if kind in KERNEL_KINDS:
            return self._kernel(op)
        if kind in MISSING_KINDS:
            return Status(MISSING_KINDS[kind] if self.target == "torchtpu" else "cpu-fallback")
        if kind == "composite_implicit":
            return self._implicit(op)
        if kind == "composite_explicit":
            return self._composite(op)
        return Status("unknown", note=f"table kind {kind!r}")

    def _implicit(self, op: str) -> Status:
        """A composite-implicit op raises where a part of its traced decomposition raises
        (`torch.cross` through `linalg_cross`). A part that only falls back to the CPU
        does not decide: inside a decomposition it is mostly a check on a scalar
        (`torch.cov` calls `equal`), a sync rather than a stop, and the op keeps its own
        reading. With no trace the op is decomposed, as before."""
        parts = [part for part in self.implicit.get(op, ()) if part != op]
        for part in parts:
            inner = self.resolve(part)
            if inner.status == "missing":
                return Status("missing", (part, *inner.via), "traced")
        return Status("decomposed", note="traced" if parts else "implicit")

    def _kernel(self, op: str) -> Status:
        base = op.split("::", 1)[1].split(".", 1)[0]
        condition = self.xla_conditional.get(base) if self.target == "xla" else None
        if condition is None:
            return Status("kernel")
        if condition.startswith("always"):
            return Status("cpu-fallback", note=f"the XLA kernel falls back to the CPU {condition}")
        return Status("kernel", note=f"falls back to the CPU when {condition}")

    def _through(self, part: str) -> Status:
        """A composite takes the status of what it runs: covered parts make it decomposed,
        a missing or falling-back part makes it missing or falling back too."""
        inner = self.resolve(part)
        status = "decomposed" if inner.status == "kernel" else inner.status
        return Status(status, (part, *inner.via), inner.note)

    def _composite(self, op: str) -> Status:
        nf = self.functions.get(op)
        name = op.split("::", 1)[1]
        base, _, overload = name.partition(".")
        if nf is not None and nf.structured_delegate and nf.structured_delegate in self.table:
            return self._through(nf.structured_delegate)
        for part in self._parts(nf, base, overload):
            if part != op and part in self.table and self._conclusive(self.resolve(part)):
                return self._through(part)
        if (nf is not None and nf.is_view) or name.endswith("_copy") or "view_copy" in (nf.tags if nf else ()):
            return Status("decomposed", note="view")
        return Status("decomposed", note="generic")

    @staticmethod
    def _conclusive(status: Status) -> bool:
        """A part says something only when it ends in a kernel, a fallback or a missing op
        (not in a cycle back to the op, nor in another generic composite)."""
        return status.status in _CONCLUSIVE or (status.status == "decomposed" and bool(status.via) and status.note is None)

    def _parts(self, nf: NativeFunction | None, base: str, overload: str) -> list[str]:
        """What a composite without a delegate is most likely built on, most specific first."""
        parts: list[str] = []
        if nf is not None and not nf.is_out:
            parts += [
                other
                for other in self._by_base.get(base, ())
                if (o := self.functions.get(other)) is not None and o.is_out and o.arguments == nf.arguments
            ]
        suffix = f".{overload}" if overload else ""
        if base.endswith("_"):
            parts.append(f"aten::{base[:-1]}{suffix}")
        else:
            parts.append(f"aten::{base}_{suffix}")
        if base.startswith("_foreach_"):
            single = base[len("_foreach_") :]
            mapped = {"List": "Tensor", "ScalarList": "Scalar", "Scalar": "Scalar", "Tensor": "Tensor", "": ""}.get(overload, overload)
            parts += [f"aten::{single}.{mapped}" if mapped else f"aten::{single}", f"aten::{single}"]
        if base.endswith("_copy"):
            parts.append(f"aten::{base[: -len('_copy')]}{suffix}")
        return parts


def xla_conditions(op_coverage: Mapping[str, object], top_fallbacks: list[Mapping[str, object]]) -> dict[str, str]:
    """Base name -> the condition under which PyTorch/XLA's own kernel falls back to the
    CPU: `always ...` where the survey says so, else the condition it gives, else a generic
    one (the kernel holds a fallback call whose condition nobody wrote down)."""
    stated: dict[str, str] = {}
    for entry in top_fallbacks:
        emulated_ops = entry.get("aten_ops_emulated", ())
        for emulated in emulated_ops if isinstance(emulated_ops, list) else ():
            found = re.match(r"^([\w.]+)\[conditional: (.*)\]$", str(emulated))
            if found:
                stated.setdefault(found.group(1).split(".", 1)[0], found.group(2).strip())
    raw = op_coverage.get("conditional_fallbacks_in_xla_kernels", {})
    out: dict[str, str] = {}
    for name in raw if isinstance(raw, dict) else ():
        base = str(name).split(" ", 1)[0]
        out[base] = stated.get(base, "on some arguments (a fallback inside its XLA kernel)")
    return out


def resolve_all(
    tables: Mapping[str, Mapping[str, str]],
    functions: Mapping[str, NativeFunction],
    xla_conditional: Mapping[str, str],
    autograd: Mapping[str, frozenset[str]] | None = None,
    implicit: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, dict[str, Status]]:
    """op -> target -> status, over every operator any table lists."""
    autograd = autograd or {}
    resolvers = {
        target: Resolver(target, table, functions, xla_conditional if target == "xla" else {}, autograd.get(target, frozenset()), implicit or {})
        for target, table in tables.items()
    }
    ops = sorted({op for table in tables.values() for op in table})
    return {op: {target: resolver.resolve(op) for target, resolver in sorted(resolvers.items())} for op in ops}
