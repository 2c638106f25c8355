"""The device a trace runs on. Child side: imports torch.

`fake` (the default) renames torch's PrivateUse1 backend to "tpu", registers it as a Python
backend with dummy hooks (torch.utils.backend_registration; nothing of TorchTPU is loaded,
no TPU runtime starts) and builds everything under FakeTensorMode: tensors with shapes,
dtypes and a "tpu" device but no data and no memory. Code sees a TPU: `x.device.type ==
"tpu"`, `torch.tpu.is_available()`, the optimizers' foreach path. Where that route is
missing (an older torch), it falls back to fake tensors on CPU semantics and says so.
`meta` uses PyTorch's meta device; `cpu` runs real tensors, which goes past branches on a
tensor's value at the cost of real memory and time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

FAKE_DEVICE = "tpu"


@dataclass
class Route:
    name: str
    """fake-tpu, fake-cpu, meta or cpu."""
    device: str
    """The device type tensors are built on and ops are judged for."""
    note: str | None
    fake_mode: Any = None

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        """Where the model, its inputs and its optimizer are made."""
        with self.active(), torch.device(self.device):
            yield

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        if self.fake_mode is None:
            yield
        else:
            with self.fake_mode:
                yield


def _fake_mode() -> Any:
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    # A shape environment lets `.item()` and `nonzero` return symbols instead of raising,
    # so a step runs on past them (a branch on such a symbol still stops it).
    return FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)


def _foreach_like_a_device() -> None:
    """The optimizers choose their foreach path only for plain tensors; on a real TPU the
    parameters are plain tensors, so count fake ones as such too."""
    from torch._subclasses.fake_tensor import FakeTensor

    for module_name in ("torch.optim.optimizer", "torch.utils._foreach_utils"):
        module = __import__(module_name, fromlist=["_foreach_supported_types"])
        supported = getattr(module, "_foreach_supported_types", None)
        if isinstance(supported, list) and FakeTensor not in supported:
            supported.append(FakeTensor)


def setup(device: str) -> Route:
    if device == "cpu":
        return Route("cpu", "cpu", "real tensors on the CPU: ops run for real, branches on values are followed")
    if device == "meta":
        return Route("meta", "meta", "PyTorch's meta device: no data; `.item()` and branches on values stop a phase")
    try:
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

        _setup_privateuseone_for_python_backend(rename=FAKE_DEVICE)
        route = Route("fake-tpu", FAKE_DEVICE, None, _fake_mode())
    except (ImportError, AttributeError, RuntimeError) as exc:
        route = Route(
            "fake-cpu",
            "cpu",
            f"this torch ({torch.__version__}) cannot register a Python backend as a pretend \"tpu\" device "
            f"({type(exc).__name__}: {exc}); traced with fake tensors on CPU semantics instead: code that tests "
            "for a TPU takes its other branch, and the optimizers may take another path (torch 2.11-2.15 have the route)",
            _fake_mode(),
        )
    _foreach_like_a_device()
    return route
