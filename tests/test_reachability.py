"""Kernels reached only through imports that may not run are fallback kept (DESIGN.md:
a blocker is a kernel "on the main path with no fallback"). Each test builds a small
project and asserts the exact kernel findings with their severity and guarded flag."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.analyze.reachability import Import, reachability, scan_imports
from tpucheck.engine import ScanOptions, scan
from tpucheck.judge.roles import supporting_path
from tpucheck.judge.score import Model
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.loader import load_judgement

RULESET = load_ruleset()

JUDGEMENT = load_judgement()
TRITON_KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n):
    pass
"""

CUDA_KERNEL = """\
__global__ void conv_forward_kernel(float* out) {}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text))


def kernels(root: Path) -> list[tuple[str, str, int, int, str, bool]]:
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [
        (f.rule, f.path, f.span.line, f.span.column, f.severity, f.guarded)
        for f in result.findings
        if f.inventory == "kernel"
    ]


def test_triton_module_imported_only_in_try_is_fallback_kept(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.core import run\n",
        "pkg/core.py": "try:\n    from pkg.fast import scale_kernel\nexcept ImportError:\n    scale_kernel = None\n",
        "pkg/fast.py": TRITON_KERNEL,
        # a test importing it unconditionally does not put it on the product's path
        "tests/test_fast.py": "from pkg.fast import scale_kernel\n",
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK004", "pkg/fast.py", 5, 2, "minor", True)]


def test_triton_module_imported_at_module_level_blocks(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.core import run\n",
        "pkg/core.py": "from pkg.fast import scale_kernel\n",
        "pkg/fast.py": TRITON_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK004", "pkg/fast.py", 5, 2, "blocker", False)]


def test_module_reached_through_an_optional_package_is_optional(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "def fused():\n    from pkg.ops import scale_kernel\n    return scale_kernel\n",
        "pkg/ops/__init__.py": "from .fast import scale_kernel\n",
        "pkg/ops/fast.py": TRITON_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK004", "pkg/ops/fast.py", 5, 2, "minor", True)]


def test_cuda_source_of_an_optionally_imported_extension(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "from pkg import conv\n",
        "pkg/conv.py": "try:\n    import conv_cuda\nexcept ImportError:\n    conv_cuda = None\n",
        "pkg/csrc/conv_cuda_kernel.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK003", "pkg/csrc/conv_cuda_kernel.cu", 1, 1, "minor", True)]


def test_platform_branch_is_the_main_path(tmp_path: Path) -> None:
    """`else: import ext_cuda` after a ROCm check is what runs on every NVIDIA machine."""
    write(tmp_path, {
        "pkg/__init__.py": "from pkg import conv\n",
        "pkg/conv.py": "import torch\nif torch.version.hip:\n    import conv_rocm as ext\nelse:\n    import conv_cuda as ext\n",
        "pkg/csrc/conv_cuda_kernel.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK003", "pkg/csrc/conv_cuda_kernel.cu", 1, 1, "blocker", False)]


def test_extension_required_anywhere_stays_a_blocker(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "from pkg import a, b\n",
        "pkg/a.py": "try:\n    import conv_cuda\nexcept ImportError:\n    conv_cuda = None\n",
        "pkg/b.py": "import conv_cuda\n",
        "pkg/csrc/conv_cuda_kernel.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK003", "pkg/csrc/conv_cuda_kernel.cu", 1, 1, "blocker", False)]


def test_a_shard_judges_as_the_whole_scan(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.core import run\n",
        "pkg/core.py": "try:\n    from pkg.fast import scale_kernel\nexcept ImportError:\n    scale_kernel = None\n",
        "pkg/fast.py": TRITON_KERNEL,
    })  # fmt: skip
    shards = [scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False, shard=(i, 2))) for i in (1, 2)]
    assert [(f.path, f.severity, f.guarded) for s in shards for f in s.findings if f.inventory == "kernel"] == [
        ("pkg/fast.py", "minor", True)
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import a.b as c, d\n", [Import(0, "a.b", False, True), Import(0, "d", False, True)]),
        ("from . import x\nfrom ..y import z\n", [Import(1, "x", False, True), Import(2, "y.z", False, True)]),
        ("try:\n    import a\nexcept ImportError:\n    from b import (\n        c,\n        d,\n    )\n",
         [Import(0, "a", True, guarded=True), Import(0, "b.c", True, guarded=True), Import(0, "b.d", True, guarded=True)]),
        ("def f(\n    x,\n):\n    import a\nimport b\n", [Import(0, "a", True), Import(0, "b", False, True)]),
        ("if TYPE_CHECKING:\n    import a\nwith w:\n    import b\n", [Import(0, "a", True, guarded=True), Import(0, "b", False)]),
        # a lazy import with no choice around it is not guarded; one under an `if` in a function is
        ("def f(x):\n    import a\n    if x:\n        import b\n", [Import(0, "a", True), Import(0, "b", True, guarded=True)]),
        ('"""\n    import not_code\n"""\nimport a  # import b\n', [Import(0, "a", False, True)]),
    ],
)
def test_scan_imports(code: str, expected: list[Import]) -> None:
    assert scan_imports(code) == expected


def test_entry_points_and_dynamic_loads_are_required() -> None:
    """A module nobody imports (a script, a plugin loaded by name) may be the main path."""
    files = {"pkg/__init__.py": "", "pkg/plugin.py": "import conv_cuda\n", "tools/run.py": "import pkg\n"}
    reach = reachability(files, ["pkg/csrc/conv_cuda_kernel.cu"], files.get, supporting_path, JUDGEMENT)
    assert reach.optional_files == frozenset()


def test_kernels_for_another_accelerator_are_an_alternative(tmp_path: Path) -> None:
    # The Ascend backend's module imports torch_npu at its top: it runs only on an NPU.
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.ops import fast\nfrom pkg.ops.backends.triton_ascend import fast as npu_fast\n",
        "pkg/ops/__init__.py": "",
        "pkg/ops/fast.py": TRITON_KERNEL,
        "pkg/ops/backends/__init__.py": "",
        "pkg/ops/backends/triton_ascend/__init__.py": "",
        "pkg/ops/backends/triton_ascend/fast.py": "import torch_npu\n" + TRITON_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [
        ("CK004", "pkg/ops/backends/triton_ascend/fast.py", 6, 2, "info", True),
        ("CK004", "pkg/ops/fast.py", 5, 2, "blocker", False),
    ]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (ascend,) = [f for f in result.findings if f.path.startswith("pkg/ops/backends")]
    assert [r.to_dict() for r in ascend.because] == [
        {"rule": "alternative.other-accelerator", "evidence": "`import torch_npu` at the top of pkg/ops/backends/triton_ascend/fast.py"},
        {"rule": "severity.kernel-fallback", "evidence": "a kernel or CUDA-only package with a working fallback: info"},
    ]


def test_a_folder_named_for_another_accelerator_proves_nothing(tmp_path: Path) -> None:
    # Issue 23: folder words (`amd`, `rocm`, `hip`, `ascend`) deleted findings. Without an
    # import of another accelerator's package the kernel is CUDA work like any other, and
    # the other findings there are reported, not dropped.
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.ops.rocm import fast\nfrom pkg.amd import sync\n",
        "pkg/ops/__init__.py": "",
        "pkg/ops/rocm/__init__.py": "",
        "pkg/ops/rocm/fast.py": TRITON_KERNEL,
        "pkg/amd/__init__.py": "",
        "pkg/amd/sync.py": "import torch\ntorch.cuda.synchronize()\n",
    })  # fmt: skip
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.path, f.severity, f.guarded) for f in result.findings if f.rule in ("CK004", "CA001")] == [
        ("CA001", "pkg/amd/sync.py", "major", False),
        ("CK004", "pkg/ops/rocm/fast.py", "blocker", False),
    ]
    assert result.set_aside == []


def test_extension_imported_from_its_package_in_a_try(tmp_path: Path) -> None:
    """`from pkg import conv_cuda` resolves to the package; the extension is still named."""
    write(tmp_path, {
        "pkg/__init__.py": "from pkg import nat\n",
        "pkg/nat.py": "def load():\n    try:\n        from pkg import conv_cuda\n    except ImportError:\n        return None\n",
        "pkg/csrc/conv_cuda/edit.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert kernels(tmp_path) == [("CK003", "pkg/csrc/conv_cuda/edit.cu", 1, 1, "minor", True)]


def test_extension_only_examples_import_is_not_required(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "",
        "examples/align.py": "import align_cuda_binding\n",
        "examples/csrc/align_cuda_binding_kernel.cu": CUDA_KERNEL,
    })  # fmt: skip
    reach = reachability(
        ["pkg/__init__.py", "examples/align.py"], ["examples/csrc/align_cuda_binding_kernel.cu"],
        {"pkg/__init__.py": "", "examples/align.py": "import align_cuda_binding\n"}.get,
        supporting_path,
        JUDGEMENT,
    )  # fmt: skip
    assert reach.optional_extensions == frozenset({"align_cuda_binding"})


def test_cuda_source_linked_to_its_extension_by_the_build_that_lists_it(tmp_path: Path) -> None:
    # The extension's name says nothing of its sources; the build file lists them.
    write(tmp_path, {
        "ext/setup.py": (
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "setup(name='fast_ops', ext_modules=[CUDAExtension(\n"
            "    'fast_ops', ['bind.cpp', 'cauchy_kernel.cu'])])\n"
        ),
        "ext/__init__.py": "",
        "ext/wrapper.py": "from fast_ops import cauchy_fwd\n",
        "ext/cauchy_kernel.cu": CUDA_KERNEL,
        "model/layer.py": "try:\n    from ext.wrapper import cauchy_fwd\nexcept ImportError:\n    cauchy_fwd = None\n",
        "other/dense_kernel.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [
        ("CK003", "ext/cauchy_kernel.cu", 1, 1, "minor", True),
        ("CK003", "other/dense_kernel.cu", 1, 1, "blocker", False),
    ]


def test_an_extension_named_without_an_underscore_is_known_by_its_build(tmp_path: Path) -> None:
    # `dcn` is no `*_cuda` name, but a build declares it: its optional import keeps its kernel
    write(tmp_path, {
        "setup.py": (
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "setup(name='det', ext_modules=[CUDAExtension('dcn', ['csrc/dcn_kernel.cu'])])\n"
        ),
        "det/__init__.py": "",
        "det/layers.py": "try:\n    import dcn\nexcept ImportError:\n    dcn = None\n",
        "csrc/dcn_kernel.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [("CK003", "csrc/dcn_kernel.cu", 1, 1, "minor", True)]
    # without the build's declaration a bare name could be any installed package: required
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='det')\n")
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [("CK003", "csrc/dcn_kernel.cu", 1, 1, "blocker", False)]


KNN_DISPATCH = """\
at::Tensor KNearestNeighborIdx(const at::Tensor& p1) {
  if (p1.is_cuda()) {
    return KNearestNeighborIdxCuda(p1);
  }
  return KNearestNeighborIdxCpu(p1);
}
"""


def test_a_cuda_kernel_beside_a_cpu_implementation_of_its_op_keeps_a_fallback(tmp_path: Path) -> None:
    # knn.cu and knn_cpu.cpp, and a header that dispatches on the device to the CPU twin:
    # a fallback a TPU tensor reaches once the caller moves it to the host (major, audit P)
    write(tmp_path, {
        "geo/__init__.py": "from geo import _C\n",
        "geo/csrc/knn/knn.cu": CUDA_KERNEL,
        "geo/csrc/knn/knn_cpu.cpp": "at::Tensor KNearestNeighborIdxCpu(const at::Tensor& p1) { return p1; }\n",
        "geo/csrc/knn/knn.h": KNN_DISPATCH,
        "geo/csrc/blend/blend.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [
        ("CK003", "geo/csrc/blend/blend.cu", 1, 1, "blocker", False),
        ("CK003", "geo/csrc/knn/knn.cu", 1, 1, "major", True),
    ]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (knn,) = [f for f in result.findings if f.path == "geo/csrc/knn/knn.cu" and f.rule == "CK003"]
    assert knn.because[0].to_dict() == {
        "rule": "fallback.cpu-twin",
        "evidence": "geo/csrc/knn/knn.h dispatches on the device to `KNearestNeighborIdxCpu` in geo/csrc/knn/knn_cpu.cpp",
    }


def test_a_cpu_twin_in_a_sibling_folder_is_wired_by_the_parents_dispatcher(tmp_path: Path) -> None:
    # audit BA (pytorch_cluster): csrc/fps.cpp sends CUDA tensors to cuda/fps_cuda.cu and
    # the rest to cpu/fps_cpu.cpp, whose function's return type sits on the line above its
    # name. Adversarial: a sibling CPU source of another op (cpu/grid_cpu.cpp beside
    # cuda/knn_cuda.cu), and a parent file that calls the CPU op without a device test
    dispatch = '#include "cpu/fps_cpu.h"\n\ntorch::Tensor fps(torch::Tensor src) {\n  if (src.device().is_cuda()) {\n    return fps_cuda(src);\n  }\n  return fps_cpu(src);\n}\n'
    write(tmp_path, {
        "geo/__init__.py": "from geo import _C\n",
        "geo/csrc/fps.cpp": dispatch,
        "geo/csrc/cpu/fps_cpu.cpp": "std::tuple<torch::Tensor, torch::Tensor>\nfps_cpu(torch::Tensor src) {\n  return src;\n}\n",
        "geo/csrc/cuda/fps_cuda.cu": CUDA_KERNEL,
        "geo/csrc/cpu/grid_cpu.cpp": "torch::Tensor grid_cpu(torch::Tensor pos) { return pos; }\n",
        "geo/csrc/cuda/knn_cuda.cu": CUDA_KERNEL,
        "geo/csrc/knn.cpp": "torch::Tensor knn(torch::Tensor x) {\n  if (x.is_cuda()) return knn_cuda(x);\n  return grid_cpu(x);\n}\n",
        "mesh/csrc/bake.cpp": "torch::Tensor bake(torch::Tensor v) { return bake_cpu(v); }\n",
        "mesh/csrc/cpu/bake_cpu.cpp": "torch::Tensor bake_cpu(torch::Tensor v) { return v; }\n",
        "mesh/csrc/cuda/bake_cuda.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [
        ("CK003", "geo/csrc/cuda/fps_cuda.cu", 1, 1, "major", True),
        ("CK003", "geo/csrc/cuda/knn_cuda.cu", 1, 1, "blocker", False),
        ("CK003", "mesh/csrc/cuda/bake_cuda.cu", 1, 1, "blocker", False),
    ]


def test_one_cpp_file_holding_the_cpu_op_and_the_dispatch_is_a_twin(tmp_path: Path) -> None:
    # audit P (Hunyuan3D-2): raster.cpp defines raster_cpu and calls it when the tensor is
    # on the CPU, beside raster_gpu.cu. Adversarial: a C++ file of another op, and one that
    # defines a `_cpu` function without a device test, keep no fallback
    dispatch = (
        "at::Tensor raster_cpu(at::Tensor v) { return v; }\n"
        "at::Tensor raster(at::Tensor v) { if (v.get_device() == -1) return raster_cpu(v); return raster_gpu(v); }\n"
    )
    write(tmp_path, {
        "tex/__init__.py": "from tex import _C\n",
        "tex/csrc/raster.cpp": dispatch,
        "tex/csrc/raster_gpu.cu": CUDA_KERNEL,
        "tex/csrc/blur_gpu.cu": CUDA_KERNEL,
        "mesh/csrc/bake.cpp": "at::Tensor bake_cpu(at::Tensor v) { return v; }\nat::Tensor bake(at::Tensor v) { return bake_cpu(v); }\n",
        "mesh/csrc/bake_gpu.cu": CUDA_KERNEL,
    })  # fmt: skip
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [
        ("CK003", "mesh/csrc/bake_gpu.cu", 1, 1, "blocker", False),
        ("CK003", "tex/csrc/blur_gpu.cu", 1, 1, "blocker", False),
        ("CK003", "tex/csrc/raster_gpu.cu", 1, 1, "major", True),
    ]


def test_a_build_of_twinned_sources_only_keeps_their_fallback(tmp_path: Path) -> None:
    # audit P (Hunyuan3D-2's setup.py): a build whose every CUDA source has a wired CPU
    # twin is the same edit (leave the .cu out); adversarial: a build that also compiles a
    # kernel without one stays on the main path
    dispatch = (
        "at::Tensor raster_cpu(at::Tensor v) { return v; }\n"
        "at::Tensor raster(at::Tensor v) { if (v.get_device() == -1) return raster_cpu(v); return raster_gpu(v); }\n"
    )
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('tex_ext', ['csrc/raster.cpp', 'csrc/raster_gpu.cu'])])\n"
    )
    write(tmp_path / "a", {
        "tex/__init__.py": "import tex_ext\n",
        "tex/csrc/raster.cpp": dispatch,
        "tex/csrc/raster_gpu.cu": CUDA_KERNEL,
        "tex/setup.py": setup,
    })  # fmt: skip
    write(tmp_path / "b", {
        "tex/__init__.py": "import tex_ext\n",
        "tex/csrc/raster.cpp": dispatch,
        "tex/csrc/raster_gpu.cu": CUDA_KERNEL,
        "tex/csrc/blur_gpu.cu": CUDA_KERNEL,
        "tex/setup.py": setup.replace("'csrc/raster_gpu.cu'", "'csrc/raster_gpu.cu', 'csrc/blur_gpu.cu'"),
    })  # fmt: skip
    assert [k[:5] for k in kernels(tmp_path / "a") if k[0] == "CK001"] == [("CK001", "tex/setup.py", 3, 20, "major")]
    assert [k[:5] for k in kernels(tmp_path / "b") if k[0] == "CK001"] == [("CK001", "tex/setup.py", 3, 20, "blocker")]


def test_an_unrelated_or_unwired_cpu_source_keeps_no_fallback(tmp_path: Path) -> None:
    # Issue 23: an unrelated `nms_cpu.cpp` lifted every `.cu` beside it. A CPU source of
    # another op, or a twin nothing dispatches to, keeps no fallback.
    write(tmp_path, {
        "det/__init__.py": "from det import _C\n",
        "det/csrc/deform_conv.cu": CUDA_KERNEL,
        "det/csrc/nms_cpu.cpp": "at::Tensor nms_cpu(const at::Tensor& boxes) { return boxes; }\n",
        "det/csrc/vision.cpp": "at::Tensor nms(const at::Tensor& b) { if (b.is_cuda()) { return nms_cuda(b); } return nms_cpu(b); }\n",
        "geo/csrc/knn/knn.cu": CUDA_KERNEL,
        "geo/csrc/knn/knn_cpu.cpp": "at::Tensor KNearestNeighborIdxCpu(const at::Tensor& p1) { return p1; }\n",
    })  # fmt: skip
    assert [k for k in kernels(tmp_path) if k[0] == "CK003"] == [
        ("CK003", "det/csrc/deform_conv.cu", 1, 1, "blocker", False),
        ("CK003", "geo/csrc/knn/knn.cu", 1, 1, "blocker", False),
    ]


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("extensions/kernels/benchmark_cauchy.py", "benchmark"),
        ("ops/attention_bench.py", "benchmark"),
        ("bench_matmul.py", "benchmark"),
        ("ops/benchmarking.py", "library"),
        ("ops/workbench.py", "library"),
    ],
)
def test_benchmark_files_by_name(path: str, role: str) -> None:
    # A benchmark script beside the kernels it times imports them at the top: as an
    # entry point of the product it would make every optional kernel required.
    from tpucheck.judge.roles import role_of

    assert role_of(path) == role


def test_a_call_into_the_projects_own_extension_is_priced_with_its_kernels(tmp_path: Path) -> None:
    # causal-conv1d priced one op family three times: its build, its binding, its kernels
    write(tmp_path, {
        "setup.py": (
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "setup(name='conv', ext_modules=[CUDAExtension('causal_conv1d_cuda', ['csrc/conv.cu'])])\n"
        ),
        "conv/__init__.py": "import causal_conv1d_cuda\n",
        "csrc/conv.cu": CUDA_KERNEL,
        "other/__init__.py": "import selective_scan_cuda\n",  # a library it does not build
    })  # fmt: skip
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    bindings = {f.path: [(r.rule, r.evidence) for r in f.because] for f in result.findings if f.rule == "CK010"}
    assert bindings == {
        "conv/__init__.py": [("kernel.own-extension", "`causal_conv1d_cuda` is built by setup.py: ported with its kernels")],
        "other/__init__.py": [],
    }
    shares = Model(RULESET.by_id(), RULESET.judgement).shares(result.findings)
    hours = {s.finding.path: (s.low, s.high) for s in shares if s.finding is not None and s.finding.rule == "CK010"}
    # the foreign library a full unit (4-40 h), the project's own binding a tenth of one
    assert hours == {"other/__init__.py": (4.0, 40.0), "conv/__init__.py": (pytest.approx(0.4), pytest.approx(4.0))}


COPY_TREE = {
    "app/__init__.py": "",
    "app/gui/__init__.py": "",
    "app/gui/seg/__init__.py": "",
    "app/gui/seg/controller.py": "from .model.net import Net\n",
    "app/gui/seg/model/__init__.py": "",
    "app/gui/seg/model/net.py": "import torch\n\nclass Net(torch.nn.Module):\n    pass\n",
    "app/gui/seg/model/syncbn/__init__.py": "",
    "app/gui/seg/model/syncbn/nn.py": "from isegm.model.syncbn.functional import batchnorm_sync\n",
    "app/gui/seg/model/syncbn/functional/__init__.py": "from .ops import batchnorm_sync\n",
    "app/gui/seg/model/syncbn/functional/ops.py": TRITON_KERNEL,
    "run_gui.py": "from app.gui.seg.controller import Net\n",
}


def test_a_copied_package_nothing_imports_is_not_an_entry_point(tmp_path: Path) -> None:
    # Blind set 18 (XMem): a SyncBN package copied from `isegm` into the GUI's folder keeps
    # `from isegm.model.syncbn...` imports; nothing imports it. Its kernel is off the main path.
    write(tmp_path, COPY_TREE)
    assert kernels(tmp_path) == [("CK004", "app/gui/seg/model/syncbn/functional/ops.py", 5, 2, "minor", True)]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (kernel,) = [f for f in result.findings if f.inventory == "kernel"]
    assert kernel.because[0].to_dict() == {
        "rule": "fallback.vendored-copy",
        "evidence": "a copy of `isegm` (app/gui/seg/model/syncbn/nn.py imports `isegm.model.syncbn.functional.batchnorm_sync`) that nothing in the product imports",
    }


@pytest.mark.parametrize(
    ("change", "severity"),
    [
        # the product imports the copy's module: it runs
        ({"app/gui/seg/controller.py": "from .model.net import Net\nfrom .model.syncbn.nn import batchnorm_sync\n"}, "blocker"),
        # `isegm` is imported outside the tree too: a package the product installs, not a
        # copy; nothing imports the folder, so it is an opt-in component (analyze/opt_in.py)
        ({"app/train.py": "import isegm\n"}, "major"),
        # the tail names no module of the importer's own tree (and nothing imports the folder)
        ({"app/gui/seg/model/syncbn/nn.py": "from isegm.other.syncbn.functional import batchnorm_sync\n"}, "major"),
    ],
)
def test_what_is_no_unimported_copy_keeps_its_kernel(tmp_path: Path, change: dict[str, str], severity: str) -> None:
    write(tmp_path, {**COPY_TREE, **change})
    assert kernels(tmp_path) == [("CK004", "app/gui/seg/model/syncbn/functional/ops.py", 5, 2, severity, False)]


def test_a_copy_at_the_projects_top_is_the_project() -> None:
    # adversarial: `pkg/models/llama.py` importing `transformers.models.llama` makes no copy
    # of the whole project (its modules stay entry points)
    files = {
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": "",
        "pkg/models/llama.py": "from transformers.models.llama import LlamaConfig\n",
        "pkg/plugin.py": "import conv_cuda\n",
    }
    reach = reachability(files, ["pkg/csrc/conv_cuda_kernel.cu"], files.get, supporting_path, JUDGEMENT)
    assert reach.optional_files == frozenset()


def test_one_module_imported_two_ways_under_a_try_is_no_choice(tmp_path: Path) -> None:
    # Blind set 22 (flownet2): `try: from nets.ops import f / except: from .nets.ops import f`
    # loads the kernel module either way; adversarial: a try whose handler imports another
    # module keeps the kernel module optional
    both = "try:\n    from pkg.nets.fast import scale\nexcept ImportError:\n    from .nets.fast import scale\n"
    other = "try:\n    from pkg.nets.fast import scale\nexcept ImportError:\n    from .nets.slow import scale\n"
    for handler, want in ((both, ("blocker", False)), (other, ("minor", True))):
        root = tmp_path / str(len(handler))
        write(root, {
            "pkg/__init__.py": "from pkg.model import scale\n",
            "pkg/model.py": handler,
            "pkg/nets/__init__.py": "",
            "pkg/nets/fast.py": TRITON_KERNEL,
            "pkg/nets/slow.py": "def scale(x):\n    return x * 2\n",
        })  # fmt: skip
        assert [(r, p, s, g) for r, p, _, _, s, g in kernels(root)] == [("CK004", "pkg/nets/fast.py", *want)], handler
