"""What the parent asks the child to trace: plain data, JSON on the child's stdin.

Shared by both sides and free of torch, so the parent can build and check a request
without importing anything of the user's or of torch.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

PHASES: tuple[str, ...] = ("inference", "training")
DEVICES: tuple[str, ...] = ("fake", "meta", "cpu")
"""fake: fake tensors on a pretend "tpu" device (no memory, no data; the default). meta:
PyTorch's meta device (no data, no device of its own). cpu: real tensors on the CPU (runs
past branches on a tensor's value, costs real memory and time)."""
DTYPES: tuple[str, ...] = ("float32", "bfloat16")

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class RequestError(ValueError):
    """A malformed reference or option: a usage error, one line."""


def check_reference(value: str, option: str) -> str:
    """`package.module:function` (the function may be `Class.method`)."""
    if not _REF.match(value):
        raise RequestError(f"{option} takes MODULE:FUNCTION (e.g. mypkg.model:build), not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class TraceRequest:
    model: str
    """MODULE:FACTORY, called with no arguments, returns the nn.Module."""
    inputs: str
    """MODULE:FN returning one batch: a tensor, a tuple of positional inputs or a dict of
    keyword inputs (it may take `device`, and then gets the device to build them on)."""
    loss: str | None = None
    """MODULE:FN(output, batch) -> a scalar tensor; default: the output's own loss."""
    optimizer: str | None = None
    """MODULE:FN(model) -> an optimizer; default: AdamW(lr=1e-3)."""
    phases: tuple[str, ...] = PHASES
    device: str = "fake"
    dtype: str = "float32"
    graph_breaks: bool = True
    """Run torch._dynamo.explain over each phase's forward (and loss) for graph breaks."""
    paths: tuple[str, ...] = ()
    """Put in front of sys.path, so that MODULE imports (the project's root by default)."""
    sites_per_op: int = 20
    """At most this many distinct user lines recorded per op (the most frequent)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["phases"] = list(self.phases)
        data["paths"] = list(self.paths)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TraceRequest:
        known = {name for name in cls.__dataclass_fields__}
        values = {key: value for key, value in data.items() if key in known}
        values["phases"] = tuple(values.get("phases", PHASES))
        values["paths"] = tuple(values.get("paths", ()))
        return cls(**values)

    def check(self) -> TraceRequest:
        """Raise RequestError on anything the child would only trip over later."""
        check_reference(self.model, "MODEL")
        check_reference(self.inputs, "--input")
        if self.loss is not None:
            check_reference(self.loss, "--loss")
        if self.optimizer is not None:
            check_reference(self.optimizer, "--optimizer")
        unknown = [p for p in self.phases if p not in PHASES]
        if unknown or not self.phases:
            raise RequestError(f"--phases takes {', '.join(PHASES)} (comma-separated), not {','.join(self.phases)!r}")
        if self.device not in DEVICES:
            raise RequestError(f"--device takes {', '.join(DEVICES)}, not {self.device!r}")
        if self.dtype not in DTYPES:
            raise RequestError(f"--dtype takes {', '.join(DTYPES)}, not {self.dtype!r}")
        return self


@dataclass(frozen=True, slots=True)
class Limits:
    """What the child may use; the parent enforces the wall clock, the child the rest."""

    seconds: float = 120.0
    memory_mb: int = 8192
    """Address space (RLIMIT_AS); torch alone maps about 1.5 GB of it."""
    extra_env: dict[str, str] = field(default_factory=dict)
