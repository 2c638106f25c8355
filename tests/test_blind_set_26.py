"""What blind set 26 showed after its first scan (in sample from then on), with a probe that
failed at `8f7902a` and adversarial look-alikes that keep their verdict.

BLD007: SAM 2's `setup.py` defaults its CUDA build switch on, but catches a failed build and
installs without the extension (`BUILD_ALLOW_ERRORS`): `pip install` succeeds on a TPU host,
so the switch stops nothing (`place.tolerated-build`, info). Still a blocker: the same switch
with no such `try`, a `try` whose handler always raises, and an exit without CUDA."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

TOLERANT = """\
import os

from setuptools import setup

BUILD_CUDA = os.getenv("PKG_BUILD_CUDA", "1") == "1"
ALLOW_ERRORS = os.getenv("PKG_BUILD_ALLOW_ERRORS", "1") == "1"


def get_extensions():
    if not BUILD_CUDA:
        return []
    try:
        from torch.utils.cpp_extension import CUDAExtension

        ext_modules = [CUDAExtension("pkg._C", ["pkg/csrc/cc.cu"])]
    except Exception as e:
        if ALLOW_ERRORS:
            print(f"skipping the CUDA extension: {e}")
            ext_modules = []
        else:
            raise e
    return ext_modules


setup(name="pkg", ext_modules=get_extensions())
"""

STRICT = TOLERANT.replace(
    """        if ALLOW_ERRORS:
            print(f"skipping the CUDA extension: {e}")
            ext_modules = []
        else:
            raise e
""",
    """        print(f"the CUDA extension failed: {e}")
        raise
""",
)

NO_TRY = """\
import os

from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

BUILD_CUDA = os.getenv("PKG_BUILD_CUDA", "1") == "1"
setup(name="pkg", ext_modules=[CUDAExtension("pkg._C", ["pkg/csrc/cc.cu"])] if BUILD_CUDA else [])
"""

EXITS = TOLERANT.replace(
    'ALLOW_ERRORS = os.getenv("PKG_BUILD_ALLOW_ERRORS", "1") == "1"\n',
    'ALLOW_ERRORS = os.getenv("PKG_BUILD_ALLOW_ERRORS", "1") == "1"\nimport sys\nimport torch\n\nif not torch.cuda.is_available():\n    sys.exit("CUDA is required")\n',
)


def _bld007(root: Path, setup_py: str) -> list[tuple[int, int, str, list[str]]]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "setup.py").write_text(setup_py)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.span.line, f.span.column, f.severity, [r.rule for r in f.because]) for f in result.findings if f.rule == "BLD007")


def test_a_build_that_goes_on_without_its_extension_stops_no_install(tmp_path: Path) -> None:
    assert _bld007(tmp_path / "tolerant", TOLERANT) == [(5, 14, "info", ["place.tolerated-build"])]


def test_a_switch_without_such_a_try_or_with_a_raising_handler_is_a_blocker(tmp_path: Path) -> None:
    assert _bld007(tmp_path / "strict", STRICT) == [(5, 14, "blocker", [])]
    assert _bld007(tmp_path / "no_try", NO_TRY) == [(6, 14, "blocker", [])]


def test_an_exit_without_cuda_stops_the_install_whatever_the_build_catches(tmp_path: Path) -> None:
    assert _bld007(tmp_path / "exits", EXITS) == [(5, 14, "info", ["place.tolerated-build"]), (10, 8, "blocker", [])]


# -- a run-time build reached only off the CPU side of a device test with a twin -----------

TWIN_OP = '''import os
import torch
from torch.autograd import Function
from torch.utils.cpp_extension import load

here = os.path.dirname(__file__)
scale_op = load("scale", sources=[os.path.join(here, "scale.cpp"), os.path.join(here, "scale_kernel.cu")])


class ScaleBackward(Function):
    @staticmethod
    def forward(ctx, grad):
        return scale_op.scale(grad)


class Scale(Function):
    @staticmethod
    def forward(ctx, x):
        return scale_op.scale(x)

    @staticmethod
    def backward(ctx, grad):
        return ScaleBackward.apply(grad)


def scale(x):
    if x.device.type == "cpu":
        out = scale_native(x)
    else:
        out = Scale.apply(x)
    return out


def scale_native(x):
    return x * 2
'''
KERNEL_CU = "__global__ void scale_kernel(float* x, int n) {\\n  x[0] *= 2.0f;\\n}\\n"


def _twin_kernels(tmp_path: Path, op: str) -> list[tuple[str, int, str, tuple[str, ...]]]:
    (tmp_path / "op").mkdir(parents=True)
    (tmp_path / "op" / "__init__.py").write_text("from .scale import scale\n")
    (tmp_path / "op" / "scale.py").write_text(op)
    (tmp_path / "op" / "scale_kernel.cu").write_text(KERNEL_CU)
    (tmp_path / "model.py").write_text("import torch\nfrom op import scale\n\n\ndef forward(x):\n    return scale(x)\n")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule in ("CK002", "CK003"))


def test_a_build_reached_only_off_the_cpu_side_of_a_twin_dispatch_is_a_known_edit(tmp_path: Path) -> None:
    assert _twin_kernels(tmp_path, TWIN_OP) == [
        ("CK002", 7, "major", ("fallback.device-twin", "severity.kernel-fallback")),
        ("CK003", 1, "major", ("fallback.device-twin", "severity.kernel-fallback")),
    ]


def test_a_function_applied_outside_the_dispatch_keeps_the_build_on_the_main_path(tmp_path: Path) -> None:
    op = TWIN_OP.replace("def scale_native(x):", "def scale_fast(x):\n    return Scale.apply(x)\n\n\ndef scale_native(x):")
    assert [row[2] for row in _twin_kernels(tmp_path, op)] == ["blocker", "blocker"]


def test_a_cpu_side_that_raises_is_no_twin(tmp_path: Path) -> None:
    op = TWIN_OP.replace("        out = scale_native(x)\n", "        raise RuntimeError('no CPU path')\n")
    assert [row[2] for row in _twin_kernels(tmp_path, op)] == ["blocker", "blocker"]
