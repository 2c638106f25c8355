"""Build the user's model and run its phases under the recorder. Child side: imports torch
and the user's modules (only ever inside the sandboxed child).

Inference is `model.eval()` under `torch.no_grad()`; training is one step: forward, loss,
backward, optimizer step, each a stage of its own so that every op says where it came from.
The phases run apart, on the same model, each with a recorder of its own.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import torch

from tpucheck.trace.device import Route
from tpucheck.trace.recorder import Event, Recorder
from tpucheck.trace.request import TraceRequest

STOPPING = ("GuardOnDataDependentSymNode", "DataDependentOutputException", "DynamicOutputShapeException", "UnsupportedOperatorException")
"""Exceptions that mean the fake route cannot follow the code any further: a branch on a
tensor's value, or an op fake tensors cannot emulate. `--device cpu` goes past them."""


class UserCodeError(Exception):
    """The user's code failed where nothing can be traced at all (import, build, inputs)."""

    def __init__(self, stage: str, exc: BaseException, site: tuple[str, int] | None) -> None:
        super().__init__(f"{stage}: {type(exc).__name__}: {exc}")
        self.stage = stage
        self.site = site


def resolve(reference: str) -> Callable[..., Any]:
    module_name, _, attribute = reference.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{reference} is not callable")
    return target


def user_site(exc: BaseException, recorder: Recorder) -> tuple[str, int] | None:
    """The innermost frame of the user's code in an exception's traceback."""
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if recorder.is_user_file(frame.f_code.co_filename):
            found = (frame.f_code.co_filename, line)
    return found


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _cast(batch: Any, device: str, dtype: torch.dtype | None) -> Any:
    def move(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        if dtype is not None and value.is_floating_point():
            value = value.to(dtype)
        return value if value.device.type == device else value.to(device)

    return torch.utils._pytree.tree_map(move, batch)


def call_model(model: Any, batch: Any) -> Any:
    if isinstance(batch, dict):
        return model(**batch)
    if isinstance(batch, tuple | list):
        return model(*batch)
    return model(batch)


def default_loss(output: Any, batch: Any) -> Any:
    """The output's own loss (a `loss` attribute or key, or a 0-d tensor among a tuple's
    items, as nanoGPT and Hugging Face models return), else the mean of the first
    floating-point tensor of the output."""
    loss = getattr(output, "loss", None)
    if loss is None and isinstance(output, dict):
        loss = output.get("loss")
    if loss is None and isinstance(output, tuple | list):
        loss = next((item for item in output if isinstance(item, torch.Tensor) and item.dim() == 0 and item.is_floating_point()), None)
    if isinstance(loss, torch.Tensor):
        return loss
    first = next((t for t in torch.utils._pytree.tree_flatten(output)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()), None)
    if first is None:
        raise TypeError("the model's output holds no floating-point tensor to take a loss of: pass --loss")
    return first.float().mean()


def default_optimizer(model: Any) -> Any:
    return torch.optim.AdamW(model.parameters(), lr=1e-3)


class Harness:
    def __init__(self, request: TraceRequest, route: Route) -> None:
        self.request = request
        self.route = route
        self.dtype = torch.bfloat16 if request.dtype == "bfloat16" else None
        self.probe = Recorder(route.device)  # only for telling user files apart

    def build(self) -> tuple[Any, Any]:
        for path in reversed(self.request.paths):
            if path not in sys.path:
                sys.path.insert(0, path)
        stage = "import"
        try:
            factory = resolve(self.request.model)
            make_inputs = resolve(self.request.inputs)
            stage = "build"
            with self.route.building(), _default_dtype(self.dtype):
                model = factory()  # bfloat16 as the default dtype: casting fake parameters afterwards is not supported
                stage = "inputs"
                raw = make_inputs(device=self.route.device) if _accepts(make_inputs, "device") else make_inputs()
                batch = _cast(raw, self.route.device, self.dtype)
        except Exception as exc:
            raise UserCodeError(stage, exc, user_site(exc, self.probe)) from exc
        return model, batch

    def run_phase(self, phase: str, model: Any, batch: Any) -> dict[str, Any]:
        recorder = Recorder(self.route.device)
        status, note, started = "complete", None, time.perf_counter()
        loss_fn = resolve(self.request.loss) if self.request.loss else default_loss
        try:
            if phase == "inference":
                model.eval()
                with self.route.active(), recorder, torch.no_grad():
                    call_model(model, batch)
            else:
                model.train()
                with self.route.building():
                    optimizer = resolve(self.request.optimizer)(model) if self.request.optimizer else default_optimizer(model)
                with self.route.active(), recorder:
                    with torch.autograd.detect_anomaly(check_nan=False):
                        recorder.stage = "forward"
                        output = call_model(model, batch)
                        recorder.stage = "loss"
                        loss = loss_fn(output, batch)
                        recorder.stage = "backward"
                        loss.backward()
                    recorder.stage = "optimizer"
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
        except Exception as exc:
            site = user_site(exc, recorder)
            where = f" at {site[0]}:{site[1]}" if site else ""
            if type(exc).__name__ in STOPPING:
                status = "stopped"
                note = f"stopped{where} in the {recorder.stage} stage: {_first_line(exc)}; `--device cpu` follows branches on a tensor's value"
                if type(exc).__name__ == "GuardOnDataDependentSymNode":
                    self._branch_on_value(recorder, site)
            else:
                status = "failed"
                note = f"{type(exc).__name__}{where} in the {recorder.stage} stage: {_first_line(exc)}"
        seconds = time.perf_counter() - started
        breaks: list[Event] = []
        explain_started = time.perf_counter()
        if self.request.graph_breaks and status == "complete":
            breaks, why_not = self.graph_breaks(phase, model, batch, loss_fn, recorder)
            note = note or why_not
        return {
            "status": status,
            "note": note,
            "seconds": round(seconds, 3),
            "explain_seconds": round(time.perf_counter() - explain_started, 3),
            "ops": recorder.ops,
            "events": [*recorder.events.values(), *breaks],
        }

    @staticmethod
    def _branch_on_value(recorder: Recorder, site: tuple[str, int] | None) -> None:
        """A Python branch on a tensor's value: the sync that read it (already recorded at
        that line, as `_local_scalar_dense`) is said to be a branch; else a sync of its own."""
        detail = "is read by a Python branch on a tensor's value: the host needs it before the step can go on"
        path, line = site if site else (None, None)
        for event in recorder.events.values():
            if event.kind == "host-sync" and (event.path, event.line) == (path, line):
                event.detail = detail
                return
        recorder.event("host-sync", None, site, detail)

    def graph_breaks(self, phase: str, model: Any, batch: Any, loss_fn: Callable[..., Any], recorder: Recorder) -> tuple[list[Event], str | None]:
        """torch._dynamo.explain over the phase's forward (and loss), inside the fake mode
        (so the step's own factory calls make fake tensors too): where torch.compile would
        split the step, with the user's file and line; or why it could not tell."""
        import logging

        torch._logging.set_logs(dynamo=logging.CRITICAL)
        torch._dynamo.reset()

        def step() -> Any:
            output = call_model(model, batch)
            return output if phase == "inference" else loss_fn(output, batch)

        model.eval() if phase == "inference" else model.train()
        try:
            with self.route.active(), torch.no_grad() if phase == "inference" else contextlib.nullcontext():
                explanation = torch._dynamo.explain(step)()
        except Exception as exc:
            return [], f"graph breaks not checked: torch._dynamo.explain failed ({type(exc).__name__}: {_first_line(exc)[:160]})"
        finally:
            torch._dynamo.reset()
        events: dict[tuple[str | None, int | None, str], Event] = {}
        for reason in explanation.break_reasons:
            frames = [f for f in getattr(reason, "user_stack", ()) or () if recorder.is_user_file(f.filename)]
            path, line = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
            detail = _first_line(getattr(reason, "reason", "graph break"))
            key = (path, line, detail)
            if key in events:
                events[key].count += 1
            else:
                events[key] = Event("graph-break", None, path, line, "forward" if phase == "inference" else "forward+loss", detail)
        return list(events.values()), None


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype | None) -> Iterator[None]:
    if dtype is None:
        yield
        return
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def _first_line(value: object) -> str:
    text = str(value).strip()
    return (text.splitlines()[0] if text else type(value).__name__)[:300]
