"""Names bound by simple assignment resolve like imports (issue 12, point 3).

`sync = torch.cuda.synchronize`, `cuda_device = torch.cuda.device`, `_custom_op =
torch.library.custom_op` and both arms of `amp = torch.cuda.amp if c else torch.amp`
feed the import table, at module level (for every function, also those written above)
and in functions, as the walk proceeds. A later rebinding to anything unresolvable
clears the alias; function locals shadow; the alias's own assignment is not reported
twice.
"""

from __future__ import annotations

from textwrap import dedent

from conftest import findings_of

from tpucheck.analyze import build_context
from tpucheck.ruleset import load_ruleset


def check(context, code: str) -> list[tuple[str, int, int]]:
    return findings_of(context, dedent(code).lstrip("\n"))


def test_module_alias_of_a_function_is_called(test_context) -> None:
    code = """
        import torch
        sync = torch.cuda.synchronize
        sync()
        def later():
            sync()
    """
    assert check(test_context, code) == [("T001", 3, 1), ("T001", 5, 5)]


def test_function_above_the_module_alias_sees_it(test_context) -> None:
    code = """
        def early():
            sync()

        import torch
        sync = torch.cuda.synchronize
    """
    assert check(test_context, code) == [("T001", 2, 5)]


def test_alias_of_a_module_resolves_attribute_calls(test_context) -> None:
    code = """
        import torch as T
        cuda = T.cuda
        amp_mod = cuda.amp
        cuda.synchronize()
        amp_mod.GradScaler()
    """
    # T020 (reference torch.cuda.amp) is the assignment's own finding on line 3, and
    # not reported again through the alias on line 5.
    assert check(test_context, code) == [("T001", 4, 1), ("T011", 5, 1), ("T020", 3, 11)]


def test_function_level_alias_and_shadowing(test_context) -> None:
    code = """
        import torch

        def step():
            s = torch.cuda.synchronize
            s()
            s = make_sync()
            s()

        def other():
            s()
    """
    assert check(test_context, code) == [("T001", 5, 5)]


def test_later_module_rebinding_clears_but_none_does_not(test_context) -> None:
    code = """
        import torch
        sync = torch.cuda.synchronize
        sync = None if lazy else sync
        sync()
        sync = my_sync
        sync()
    """
    assert check(test_context, code) == [("T001", 4, 1)]


def test_none_fallback_keeps_the_alias(test_context) -> None:
    code = """
        import torch
        try:
            sync = torch.cuda.synchronize
        except AttributeError:
            sync = None
        sync()
    """
    assert check(test_context, code) == [("T001", 6, 1)]


def test_both_arms_of_a_conditional_bind(test_context) -> None:
    code = """
        import torch
        amp = torch.amp if cpu_only else torch.cuda.amp
        scaler = amp.GradScaler()
        cuda_or_none = torch.cuda if use_cuda else None
        cuda_or_none.synchronize()
    """
    # The CUDA arm is the second one; T020 on the right-hand side (line 2) only: the
    # alias is not reported again.
    assert check(test_context, code) == [("T001", 5, 1), ("T011", 3, 10), ("T020", 2, 34)]


def test_decorator_through_an_alias(test_context) -> None:
    code = """
        import triton
        jit = triton.jit
        @jit
        def kernel(x):
            pass
    """
    assert check(test_context, code) == [("T004", 3, 2)]


def test_bare_alias_use_and_assignment_target_are_not_reported_again(test_context) -> None:
    code = """
        from torch.backends import cudnn
        bench = cudnn.benchmark
        flags.append(bench)
        bench = cudnn.benchmark
    """
    assert check(test_context, code) == [("T002", 2, 9), ("T002", 4, 9)]


def test_local_names_shadow_a_module_alias(test_context) -> None:
    code = """
        import torch
        sync = torch.cuda.synchronize

        def run(sync):
            sync()

        def other():
            sync = lambda: None
            sync()
    """
    assert check(test_context, code) == []


def test_walrus_binds_an_alias(test_context) -> None:
    code = """
        import torch
        if (s := torch.cuda.synchronize) is not None:
            s()
    """
    assert check(test_context, code) == [("T001", 3, 5)]


def test_first_party_values_are_not_aliases(test_context) -> None:
    code = """
        from . import cuda_utils
        sync = cuda_utils.synchronize
        sync()
    """
    assert check(test_context, code) == []


BUILTIN = build_context(load_ruleset())


def test_issue_examples_with_the_builtin_rules() -> None:
    """The three shapes real code showed, against the shipped rules."""
    code = dedent(
        """
        import torch
        _custom_op = torch.library.custom_op
        cuda_device = torch.cuda.device

        @_custom_op("mylib::fused", mutates_args=(), device_types="cuda")
        def fused(x: torch.Tensor) -> torch.Tensor:
            return x

        def place(i):
            with cuda_device(i):
                sync = torch.cuda.synchronize
                sync()
        """
    ).lstrip("\n")
    found = set(findings_of(BUILTIN, code))
    assert ("CK009", 5, 46) in found  # device_types="cuda" in a custom_op called through the alias
    assert ("CA004", 10, 10) in found  # torch.cuda.device(i) through the alias
    assert ("CA001", 12, 9) in found  # torch.cuda.synchronize() through a function-level alias


def test_an_import_or_a_definition_replaces_an_alias(test_context) -> None:
    code = """
        import torch
        sync = torch.cuda.synchronize
        from mylib import sync
        sync()
        free = torch.cuda.synchronize
        def free():
            pass
        free()
    """
    assert check(test_context, code) == []
