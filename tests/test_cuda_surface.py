"""The torch.cuda uses real code showed and no rule saw: references, patches, legacy types.

Each fixture is code written for this test, scanned with the built-in rules; the exact
findings (rule, line, column) are asserted, so a rule that stops seeing a use fails here.
"""

from __future__ import annotations

from textwrap import dedent

import pytest
from conftest import findings_of

from tpucheck.analyze import build_context
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


def test_bare_torch_cuda_is_flagged_once(builtin) -> None:
    """`torch.cuda` used as a value is CA022's, once per use; a longer chain
    (`torch.cuda.synchronize`) is its own rule's alone, and names looked up through an
    alias of the module are found through the alias without a second CA022."""
    code = """
        import torch
        fn = getattr(torch.cuda, "synchronize")
        module = torch.cuda if use_gpu else None
        cuda = torch.cuda
        cuda.synchronize()
        torch.cuda.synchronize()
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    """
    assert found(builtin, code, {"CA001", "CA022", "CA100"}) == [
        ("CA001", 5, 1),
        ("CA001", 6, 1),
        ("CA022", 2, 14),
        ("CA022", 3, 10),
        ("CA022", 4, 8),
        ("CA022", 7, 21),
    ]


def test_the_cudart_profiler_switch(builtin) -> None:
    code = """
        import torch
        torch.cuda.cudart().cudaProfilerStart()
        check = torch.cuda.check_error
    """
    assert found(builtin, code, {"CA114", "CA117", "CA100"}) == [("CA114", 3, 9), ("CA117", 2, 1)]


def test_memory_pools(builtin) -> None:
    code = """
        import torch
        pool = torch.cuda.MemPool(allocator)
        with torch.cuda.use_mem_pool(pool):
            x = torch.empty(8)
        def make() -> torch.cuda.MemPool:
            return pool
    """
    # the return annotation names the type and runs nothing: not a use
    assert found(builtin, code, {"CA105", "CA152"}) == [("CA105", 2, 8), ("CA152", 3, 6)]


def test_a_module_rule_flags_only_what_the_specific_rules_leave(builtin) -> None:
    """`torch.cuda.amp` (CA107) sees the module and the names below it that no other rule
    judges; autocast, custom_fwd and a GradScaler call belong to their own rules, and an
    autocast turned off stays unreported by either."""
    code = """
        import torch
        amp = torch.cuda.amp
        state = torch.cuda.amp.grad_scaler.OptState
        def step(scaler: torch.cuda.amp.GradScaler) -> None:
            pass
        scaler = torch.cuda.amp.GradScaler()
        with torch.cuda.amp.autocast():
            pass
        with torch.cuda.amp.autocast(enabled=False):
            pass
        fwd = torch.cuda.amp.custom_fwd
    """
    assert found(builtin, code, {"CA107", "CA014", "CA015", "CA100"}) == [
        ("CA014", 7, 6),
        ("CA014", 11, 7),
        ("CA015", 6, 10),
        ("CA107", 2, 7),
        ("CA107", 3, 9),
        # not the parameter's annotation (line 4): a type, not a use
    ]


def test_a_private_name_falls_to_the_catch_all(builtin) -> None:
    code = """
        import torch
        torch.cuda._sleep(100)
        bad_fork = torch.cuda._is_in_bad_fork
        torch.cuda.memory._record_memory_history(max_entries=10)
        torch.cuda.comm.broadcast(x, devices=[0, 1])
    """
    assert found(builtin, code, {"CA100", "CA141", "CA020", "CA019"}) == [
        ("CA019", 5, 1),
        ("CA020", 4, 1),
        ("CA100", 2, 1),
        ("CA100", 3, 12),
    ]


def test_an_availability_guard_stays_unreported(builtin) -> None:
    """The generated rules and the catch-all leave `torch.cuda.is_available()` to CA002,
    whose guard conditions keep a fallback and are not reported (unless: guard)."""
    code = """
        import torch
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        device = "cuda" if torch.cuda.is_available() else "cpu"
    """
    assert found(builtin, code, {"CA001", "CA002", "CA022", "CA100"}) == [("CA001", 3, 5), ("CA002", 4, 20)]
