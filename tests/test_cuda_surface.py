"""The torch.cuda uses real code showed and no rule saw: references, patches, legacy types.

Each fixture is code written for this test, scanned with the built-in rules; the exact
findings (rule, line, column) are asserted, so a rule that stops seeing a use fails here.
"""

from __future__ import annotations

from textwrap import dedent

import pytest
from conftest import findings_of

from tpucheck.analyzers import build_context
from tpucheck.ruleset import load_ruleset


@pytest.fixture(scope="module")
def builtin():
    return build_context(load_ruleset())


def found(context, code: str, rules: set[str]) -> list[tuple[str, int, int]]:
    return [f for f in findings_of(context, dedent(code).lstrip("\n")) if f[0] in rules]


def test_a_function_passed_as_a_value(builtin) -> None:
    code = """
        import torch
        hooks = [torch.cuda.empty_cache, torch.cuda.synchronize]
        trainer.add_callback(on_epoch_end=torch.cuda.empty_cache)
    """
    assert found(builtin, code, {"CA001", "CA007"}) == [("CA001", 2, 34), ("CA007", 2, 10), ("CA007", 3, 35)]


def test_a_monkeypatching_assignment(builtin) -> None:
    code = """
        import torch
        torch.cuda.is_available = lambda: True
        torch.cuda.device_count = lambda: 1
    """
    assert found(builtin, code, {"CA002", "CA004"}) == [("CA002", 2, 1), ("CA004", 3, 1)]


def test_a_name_bound_from_torch_cuda(builtin) -> None:
    code = """
        from torch.cuda import Event, get_device_properties
        timer = Event
        props = get_device_properties
    """
    assert found(builtin, code, {"CA009", "CA016"}) == [("CA009", 2, 9), ("CA016", 3, 9)]


def test_legacy_tensor_and_storage_types(builtin) -> None:
    code = """
        import torch
        buf = torch.cuda.FloatTensor(16)
        ok = isinstance(s, torch.cuda.FloatStorage)
    """
    assert found(builtin, code, {"CA021"}) == [("CA021", 2, 7), ("CA021", 3, 20)]


def test_custom_fwd_and_custom_bwd(builtin) -> None:
    code = """
        import torch
        from torch.cuda.amp import custom_bwd

        class Mul(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
            def forward(ctx, a):
                return a

            @staticmethod
            @custom_bwd
            def backward(ctx, g):
                return g

        fwd = torch.cuda.amp.custom_fwd
    """
    assert found(builtin, code, {"CA014"}) == [("CA014", 6, 6), ("CA014", 11, 6), ("CA014", 15, 7)]


def test_the_cuda_profiler(builtin) -> None:
    code = """
        import torch
        torch.cuda.profiler.start()
        with torch.cuda.profiler.profile():
            step()
    """
    assert found(builtin, code, {"CA011"}) == [("CA011", 2, 1), ("CA011", 3, 6)]


def test_autocast_turned_off_is_not_a_request_for_fp16(builtin) -> None:
    code = """
        import torch
        with torch.autocast("cuda", enabled=False):
            y = f(x)
        with torch.autocast("cuda", dtype=torch.float16, enabled=True):
            y = f(x)
        with torch.cuda.amp.autocast(enabled=False):
            y = f(x)
    """
    assert found(builtin, code, {"CA014"}) == [("CA014", 4, 6)]


@pytest.mark.xfail(reason="bare `torch.cuda` (getattr(torch.cuda, name), mod = torch.cuda) needs a walker change: "
                   "a reference rule on exactly `torch.cuda` fires on every `torch.cuda.X` chain", strict=True)
def test_bare_torch_cuda(builtin) -> None:
    code = """
        import torch
        fn = getattr(torch.cuda, "synchronize")
    """
    assert [f for f in findings_of(builtin, dedent(code).lstrip("\n")) if f[1] == 2 and f[2] == 14]
