"""The operator table: its resolution of composites, and the committed file being exactly
the generator's output for the shared data (skipped where `../shared` is absent)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tpucheck.trace.opstatus import load_op_table
from tpucheck.trace.resolve import Resolver, parse_native_functions

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "data" / "torchtpu" / "coverage").is_dir(), reason=f"shared coverage data not present at {SHARED}")

NATIVE = parse_native_functions(
    [
        {"func": "mm(Tensor self, Tensor mat2) -> Tensor", "structured_delegate": "mm.out"},
        {"func": "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", "structured": True, "dispatch": {"CPU": "x"}},
        {"func": "median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", "dispatch": {"CompositeExplicitAutograd": "m"}},
        {"func": "median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)", "dispatch": {"CPU": "x"}},
        {"func": "t(Tensor(a) self) -> Tensor(a)", "dispatch": {"CompositeExplicitAutograd": "t"}},
        {"func": "t_(Tensor(a!) self) -> Tensor(a!)", "dispatch": {"CompositeExplicitAutograd": "t_"}},
        {"func": "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", "dispatch": {"CompositeExplicitAutograd": "clone"}},
        {"func": "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"},
        {"func": "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "structured_delegate": "add.out"},
        {"func": "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "structured": True},
        {"func": "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()", "dispatch": {"CompositeExplicitAutograd": "slow"}},
    ]
)
TABLE = {
    "aten::mm": "composite_explicit",
    "aten::mm.out": "tpu_kernel",
    "aten::median.dim": "composite_explicit",
    "aten::median.dim_values": "tpu_missing_fallback",
    "aten::t": "composite_explicit",
    "aten::t_": "composite_explicit",
    "aten::clone": "composite_explicit",
    "aten::linear": "composite_implicit",
    "aten::add_.Tensor": "composite_explicit",
    "aten::add.out": "xla_kernel",
    "aten::_foreach_add_.List": "composite_explicit",
    "aten::nonzero": "xla_kernel",
}


def test_a_structured_op_is_covered_through_its_delegate() -> None:
    status = Resolver("torchtpu", TABLE, NATIVE).resolve("aten::mm")
    assert (status.status, status.via) == ("decomposed", ("aten::mm.out",))


def test_a_composite_whose_out_variant_is_missing_is_missing() -> None:
    status = Resolver("torchtpu", TABLE, NATIVE).resolve("aten::median.dim")
    assert (status.status, status.via) == ("missing", ("aten::median.dim_values",))
    assert Resolver("xla", {**TABLE, "aten::median.dim_values": "xla_cpu_fallback"}, NATIVE).resolve("aten::median.dim").status == "cpu-fallback"


def test_views_generic_composites_and_implicit_ones_are_decomposed_and_say_how() -> None:
    resolver = Resolver("torchtpu", TABLE, NATIVE)
    assert (resolver.resolve("aten::t").status, resolver.resolve("aten::t").note) == ("decomposed", "view")  # t -> t_ -> t is a cycle, not an answer
    assert (resolver.resolve("aten::clone").status, resolver.resolve("aten::clone").note) == ("decomposed", "generic")
    assert (resolver.resolve("aten::linear").status, resolver.resolve("aten::linear").note) == ("decomposed", "implicit")
    assert resolver.resolve("aten::never_heard_of").status == "unknown"


def test_a_foreach_slow_path_is_its_per_tensor_op() -> None:
    status = Resolver("xla", TABLE, NATIVE).resolve("aten::_foreach_add_.List")
    assert (status.status, status.via) == ("decomposed", ("aten::add_.Tensor", "aten::add.out"))


def test_xla_kernels_that_always_fall_back_inside_are_cpu_fallbacks() -> None:
    resolver = Resolver("xla", TABLE, NATIVE, {"nonzero": "always unless XLA_EXPERIMENTAL contains 'nonzero'", "mm": "on some arguments"})
    assert resolver.resolve("aten::nonzero").status == "cpu-fallback"
    assert Resolver("xla", {"aten::mm": "xla_kernel"}, NATIVE, {"mm": "beta != 1"}).resolve("aten::mm").note == "falls back to the CPU when beta != 1"


def test_the_shipped_table_answers_the_issues_cases() -> None:
    table = load_op_table()
    assert table.status("aten::median", "torchtpu").status == "missing"
    assert table.status("aten::nonzero", "torchtpu").status == "kernel"
    assert table.status("aten::nonzero", "xla").status == "cpu-fallback"
    assert table.status("aten::addmm", "torchtpu").status == "decomposed"
    assert table.status("mylib::fused", "torchtpu").status == "unknown"
    assert {source["file"].rsplit("/", 1)[-1] for source in table.provenance()} >= {"torch_tpu_0.2.0.json", "torch_xla_2.9.0.json", "native_functions.yaml", "op_coverage.json"}
    assert all(len(source["sha256"]) == 64 for source in table.provenance())


@needs_shared
def test_the_committed_table_is_the_generators_output() -> None:
    spec = importlib.util.spec_from_file_location("generate_op_table", ROOT / "scripts" / "generate_op_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "rules" / "op-status.json").read_text(encoding="utf-8")
    assert committed == module.generate(SHARED), "rules/op-status.json is stale: run python scripts/generate_op_table.py"


def test_an_op_the_backend_differentiates_itself_carries_the_mark() -> None:
    table = load_op_table()
    assert table.status("aten::native_layer_norm", "xla").autograd  # so its PyTorch backward never reaches XLA
    assert not table.status("aten::native_layer_norm", "torchtpu").autograd


def test_a_traced_implicit_composite_raises_where_a_part_raises() -> None:
    """`torch.cross` is composite-implicit and calls `linalg_cross`, whose out= kernel
    TorchTPU lacks: the decomposition stops there, so the function does too."""
    table = {**TABLE, "aten::cross": "composite_implicit", "aten::linalg_cross": "composite_explicit", "aten::linalg_cross.out": "tpu_missing_fallback"}
    native = {**NATIVE, **parse_native_functions([
        {"func": "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", "structured_delegate": "linalg_cross.out"},
        {"func": "linalg_cross.out(Tensor self, Tensor other, *, int dim=-1, Tensor(a!) out) -> Tensor(a!)", "structured": True, "dispatch": {"CPU": "x"}},
    ])}
    traced = {"aten::cross": ("aten::linalg_cross",), "aten::linear": ("aten::t", "aten::mm")}
    resolver = Resolver("torchtpu", table, native, implicit=traced)
    cross = resolver.resolve("aten::cross")
    assert (cross.status, cross.via, cross.note) == ("missing", ("aten::linalg_cross", "aten::linalg_cross.out"), "traced")
    assert (resolver.resolve("aten::linear").status, resolver.resolve("aten::linear").note) == ("decomposed", "traced")
    # untraced, the same op keeps the old reading: decomposed above the backend
    assert Resolver("torchtpu", table, native).resolve("aten::cross").status == "decomposed"


def test_a_part_that_only_falls_back_to_the_cpu_does_not_decide() -> None:
    """Inside a decomposition a CPU fallback is mostly a check on a scalar (`torch.cov`
    calls `equal`): a sync, not a stop, so the composite stays decomposed."""
    table = {**TABLE, "aten::cov": "composite_implicit", "aten::equal": "xla_cpu_fallback", "aten::mm": "xla_kernel"}
    resolver = Resolver("xla", table, NATIVE, implicit={"aten::cov": ("aten::equal", "aten::mm")})
    assert (resolver.resolve("aten::cov").status, resolver.resolve("aten::cov").note) == ("decomposed", "traced")


def test_the_shipped_table_reads_the_traced_decompositions() -> None:
    table = load_op_table()
    for op in ("aten::cross", "aten::linalg_eigh", "aten::det", "aten::nanmean", "aten::matrix_exp", "aten::linalg_cholesky"):
        assert table.status(op, "torchtpu").status == "missing", op
    for op in ("aten::einsum", "aten::linalg_solve", "aten::inverse", "aten::svd", "aten::cosine_similarity"):
        assert table.status(op, "torchtpu").status == "decomposed", op
    assert table.status("aten::cross", "torchtpu").via[0] == "aten::linalg_cross"


def _script_output_or_skip(script: str) -> Any:
    """A generator script under scripts/, loaded as a module, when torch 2.13.0 (the
    version the committed tables were read from) is installed; else the test is skipped."""
    spec = importlib.util.spec_from_file_location(f"script_{script}", ROOT / "scripts" / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import torch

    if torch.__version__.split("+", 1)[0] != "2.13.0":
        pytest.skip(f"the table was read from torch 2.13.0, not {torch.__version__}")
    return module


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="tracing needs torch (pip install torch==2.13.0)")
def test_the_committed_decompositions_are_the_tracers_output() -> None:
    module = _script_output_or_skip("trace_implicit")
    committed = (ROOT / "rules" / "implicit-ops.json").read_text(encoding="utf-8")
    assert committed == module.render(module.trace(), "2.13.0"), "rules/implicit-ops.json is stale: run python scripts/trace_implicit.py"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="listing needs torch (pip install torch==2.13.0)")
def test_the_committed_torch_names_are_torch_s_own() -> None:
    module = _script_output_or_skip("torch_names")
    committed = (ROOT / "rules" / "torch-names.json").read_text(encoding="utf-8")
    assert committed == module.render(module.names(), "2.13.0"), "rules/torch-names.json is stale: run python scripts/torch_names.py"
