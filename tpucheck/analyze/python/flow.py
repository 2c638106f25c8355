"""Control flow as the walk sees it: which branches are guarded (a CUDA path with a
fallback), which are test skips, periodic or `__main__` blocks, and what a `try` with an
`except ImportError` keeps optional. The conditions themselves are judged in conditions.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tpucheck.analyze.python.conditions import (
    catches,
    counts_cuda_devices,
    cuda_polarity,
    cuda_settings_only,
    fails,
    falls_back,
    is_exit,
    is_main_test,
    is_periodic,
    mentions_guard,
    top_packages,
    tpu_test,
)
from tpucheck.analyze.python.scope import dotted

if TYPE_CHECKING:
    from tpucheck.analyze.python.walker import Walker


def on_if(walker: Walker, node: cst.If, ctx: str | None) -> None:
    test_parts = dotted(node.test)
    if test_parts is not None and test_parts[-1] == "TYPE_CHECKING":
        walker.type_checking += 1
        try:
            walker.walk(node.body)
        finally:
            walker.type_checking -= 1
        if node.orelse is not None:
            walker.walk(node.orelse)
        return
    available = mentions_guard(node.test, walker.index)
    polarity = cuda_polarity(walker, node.test)
    # A side that raises is no fallback: the other side is the only way on (and the test
    # that picks it is the place to edit, so it is reported).
    body_fails, else_fails = fails(node.body), fails(node.orelse)
    skip = polarity < 0 and is_exit(node.body) and not body_fails
    walker.guard_test = (available or counts_cuda_devices(walker, node.test)) and ((polarity > 0 and not else_fails) or skip)
    # A device test is a guard, not a lost path, when the branch a TPU takes is the one
    # written for other devices (`if x.device.type != "cuda": return fallback(x)`), or
    # when the CUDA side only sets CUDA's own knobs (tf32, sync debug mode).
    walker.guard_test = walker.guard_test or (not available and polarity < 0 and not body_fails) or (
        polarity > 0 and cuda_settings_only(walker, node.body)
    )
    try:
        walker.walk(node.test)
    finally:
        walker.guard_test = False
    # An availability check marks both branches (the existing contract); a device
    # test (`x.is_cuda`, `device.type == "cuda"`) marks the branch that is CUDA.
    body_guarded = (available or polarity > 0) and not else_fails
    # `if <xla/tpu>: ... else: <CUDA>`: the CUDA branch has a TPU sibling.
    else_guarded = (available or (polarity < 0 and not skip) or tpu_test(walker, node.test)) and not body_fails
    periodic = is_periodic(node.test)
    outer_role = walker.role
    if outer_role is None and is_main_test(node.test):
        walker.role = "example"
    walker.periodic_depth += periodic
    try:
        walker.guard_depth += body_guarded
        try:
            walker.walk(node.body)
        finally:
            walker.guard_depth -= body_guarded
    finally:
        walker.periodic_depth -= periodic
        walker.role = outer_role
    if node.orelse is not None:
        walker.guard_depth += else_guarded
        try:
            walker.walk(node.orelse)
        finally:
            walker.guard_depth -= else_guarded


def on_try(walker: Walker, node: cst.Try, ctx: str | None) -> None:
    imported = top_packages(node.body.body)
    guarded = any(catches(handler, walker.index.guard_exceptions) and falls_back(handler, imported) for handler in node.handlers)
    walker.guard_depth += guarded
    try:
        walker.walk(node.body)
    finally:
        walker.guard_depth -= guarded
    walker.walk_all(node.handlers)
    if node.orelse is not None:
        walker.walk(node.orelse)
    if node.finalbody is not None:
        walker.walk(node.finalbody)


def on_loop(walker: Walker, node: cst.For | cst.While, ctx: str | None) -> None:
    if isinstance(node, cst.For):
        walker.walk(node.target)
        walker.walk(node.iter)
    else:
        walker.walk(node.test)
    walker.loop_depth += 1
    try:
        walker.walk(node.body)
    finally:
        walker.loop_depth -= 1
    if node.orelse is not None:
        walker.walk(node.orelse)


def on_if_expression(walker: Walker, node: cst.IfExp, ctx: str | None) -> None:
    """`"cuda" if torch.cuda.is_available() else "cpu"`: both branches are optional
    paths, as under an `if` with the same test; a device context reaches both. As there,
    the CUDA side of a TPU or device-agnostic test (`... if hasattr(torch, "accelerator")
    else "cuda"`) has a sibling that runs on the TPU."""
    walker.walk(node.test)
    available = mentions_guard(node.test, walker.index)
    polarity = cuda_polarity(walker, node.test)
    body, orelse = available or polarity > 0, available or polarity < 0 or tpu_test(walker, node.test)
    walker.guard_depth += body
    try:
        walker.walk(node.body, ctx)
    finally:
        walker.guard_depth -= body
    walker.guard_depth += orelse
    try:
        walker.walk(node.orelse, ctx)
    finally:
        walker.guard_depth -= orelse


def on_boolean(walker: Walker, node: cst.BooleanOperation, ctx: str | None) -> None:
    """`torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8`,
    `not x.is_cuda or torch.cuda.is_current_stream_capturing()`: the right side runs only
    with CUDA, as the body of an `if` with the left side's test would."""
    walker.walk(node.left, ctx)
    polarity = cuda_polarity(walker, node.left)
    guarded = polarity > 0 if isinstance(node.operator, cst.And) else polarity < 0
    walker.guard_depth += guarded
    try:
        walker.walk(node.right, ctx)
    finally:
        walker.guard_depth -= guarded


def on_failure(walker: Walker, node: cst.Assert | cst.Raise, ctx: str | None) -> None:
    """`assert ok.all(), f"got {x.tolist()}"`, `raise ValueError(f"{n.item()}")`: the
    message is built only when the check fails, so a host sync there costs no step."""
    if isinstance(node, cst.Assert):
        walker.walk(node.test)
        failure: cst.CSTNode | None = node.msg
    else:
        failure = node.exc
        if node.cause is not None:
            walker.walk(node.cause)
    if failure is None:
        return
    walker.failure_depth += 1
    try:
        walker.walk(failure)
    finally:
        walker.failure_depth -= 1
