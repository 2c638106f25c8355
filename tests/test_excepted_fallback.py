"""A compiled extension whose every call sits in a `try` whose handler computes the same
result with PyTorch (blind set 19: fc-clip's deformable attention): the kernel is off the
main path, with its reason; handlers that give up, log, or compute something else, and calls
outside such a `try`, keep it a blocker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

BINDING = """\
import torch
from torch.autograd import Function

try:
    import DeformOps as ops
except ModuleNotFoundError:
    raise ModuleNotFoundError("build the extension: python setup.py build_ext")


class DeformFunction(Function):
    @staticmethod
    def forward(ctx, value, offsets):
        return ops.deform_forward(value, offsets)


def deform_reference(value, offsets):
    return torch.nn.functional.grid_sample(value, offsets, align_corners=False)
"""

CALLER = """\
import torch
from ..functions import DeformFunction
from ..functions.deform_func import deform_reference


class Deform(torch.nn.Module):
    def forward(self, value, offsets):
        try:
            out = DeformFunction.apply(value, offsets)
        except:
            out = deform_reference(value, offsets)
        return out * 2
"""

TREE = {
    "net/__init__.py": "from net.ops.modules.deform import Deform\n",
    "net/ops/__init__.py": "",
    "net/ops/functions/__init__.py": "from .deform_func import DeformFunction\n",
    "net/ops/functions/deform_func.py": BINDING,
    "net/ops/modules/__init__.py": "",
    "net/ops/modules/deform.py": CALLER,
    "setup.py": (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
        "setup(name='deform', ext_modules=[CUDAExtension('DeformOps', ['net/ops/src/deform_cuda.cu'])], cmdclass={'build_ext': BuildExtension})\n"
    ),
    "net/ops/src/deform_cuda.cu": "__global__ void deform_kernel(float* out) { out[threadIdx.x] = 0.f; }\n",
    "train.py": "from net import Deform\nmodel = Deform()\n",
}


def kernel_rows(root: Path, files: dict[str, str]) -> list[tuple[str, str, int, int, str, str | None]]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted(
        (f.rule, f.path, f.span.line, f.span.column, f.severity, f.because[0].rule if f.because else None)
        for f in result.findings
        if f.rule in ("CK001", "CK003")
    )


def test_a_kernel_whose_every_call_falls_back_in_its_except_is_a_small_check(tmp_path: Path) -> None:
    assert kernel_rows(tmp_path, TREE) == [
        ("CK001", "setup.py", 3, 35, "minor", "fallback.except-twin"),
        ("CK003", "net/ops/src/deform_cuda.cu", 1, 1, "minor", "fallback.except-twin"),
    ]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (kernel,) = [f for f in result.findings if f.rule == "CK003"]
    assert kernel.because[0].evidence == (
        "every call into the `DeformOps` extension's binding is in a try whose handler does the job without it"
        " (`deform_reference` at net/ops/modules/deform.py:10); its import must be made optional"
    )


@pytest.mark.parametrize(
    "handler",
    [
        # gives up
        "        except RuntimeError:\n            raise RuntimeError('build the extension')\n",
        # only reports
        "        except Exception as e:\n            print(e)\n",
        # computes something else
        "        except:\n            loss = deform_reference(value, offsets)\n",
        # the same job through the binding again
        "        except:\n            out = DeformFunction.apply(value.float(), offsets)\n",
    ],
)
def test_a_handler_that_does_not_do_the_job_keeps_the_kernel(tmp_path: Path, handler: str) -> None:
    head, _, rest = CALLER.partition("        except:\n            out = deform_reference(value, offsets)\n")
    files = {**TREE, "net/ops/modules/deform.py": head + handler + rest}
    assert kernel_rows(tmp_path, files) == [
        ("CK001", "setup.py", 3, 35, "blocker", None),
        ("CK003", "net/ops/src/deform_cuda.cu", 1, 1, "blocker", None),
    ]


def test_one_call_outside_such_a_try_keeps_the_kernel(tmp_path: Path) -> None:
    other = "from net.ops.functions import DeformFunction\n\ndef fast(v, o):\n    return DeformFunction.apply(v, o)\n"
    files = {**TREE, "net/fast.py": other, "net/__init__.py": TREE["net/__init__.py"] + "from net.fast import fast\n"}
    assert kernel_rows(tmp_path, files) == [
        ("CK001", "setup.py", 3, 35, "blocker", None),
        ("CK003", "net/ops/src/deform_cuda.cu", 1, 1, "blocker", None),
    ]


TESTED_CALLER = """\
import torch
from ..functions import DeformFunction
from ..functions.deform_func import deform_reference


class Deform(torch.nn.Module):
    def forward(self, value, offsets):
        if torch.cuda.is_available() and value.is_cuda:
            out = DeformFunction.apply(value, offsets)
        else:
            out = deform_reference(value, offsets)
        return out * 2
"""


def test_a_kernel_whose_every_call_is_on_the_cuda_side_of_a_twin_is_a_performance_note(tmp_path: Path) -> None:
    """Audit AW (detrex's MSDeformAttn): a TPU host takes the PyTorch side by itself."""
    files = {**TREE, "net/ops/modules/deform.py": TESTED_CALLER}
    assert kernel_rows(tmp_path, files) == [
        ("CK001", "setup.py", 3, 35, "info", "fallback.cuda-test-twin"),
        ("CK003", "net/ops/src/deform_cuda.cu", 1, 1, "info", "fallback.cuda-test-twin"),
    ]


@pytest.mark.parametrize(
    ("test", "other"),
    [
        # a test a host without CUDA can pass
        ("torch.cuda.is_available() or value.is_cuda", "            out = deform_reference(value, offsets)\n"),
        ("not value.is_cuda", "            out = deform_reference(value, offsets)\n"),
        ('value.device.type == "cpu"', "            out = deform_reference(value, offsets)\n"),
        # the other side gives up, or does another job
        ("value.is_cuda", "            raise RuntimeError('CUDA only')\n"),
        ("value.is_cuda", "            loss = deform_reference(value, offsets)\n"),
    ],
)
def test_a_test_or_other_side_that_is_no_cuda_twin_keeps_the_kernel(tmp_path: Path, test: str, other: str) -> None:
    caller = TESTED_CALLER.replace("torch.cuda.is_available() and value.is_cuda", test).replace("            out = deform_reference(value, offsets)\n", other)
    files = {**TREE, "net/ops/modules/deform.py": caller}
    assert kernel_rows(tmp_path, files) == [
        ("CK001", "setup.py", 3, 35, "blocker", None),
        ("CK003", "net/ops/src/deform_cuda.cu", 1, 1, "blocker", None),
    ]


def test_an_import_by_name_whose_handler_builds_the_same_extension_is_required() -> None:
    """Audit AX (Protenix's fast layer norm): `ext = importlib.import_module("ext")` in a
    try whose handler compiles the same extension from its CUDA sources is no fallback: the
    import is required. A handler that leaves a placeholder keeps it optional."""
    from tpucheck.analyze.imports import import_facts

    text = (
        "import importlib\n"
        "try:\n"
        '    ext = importlib.import_module("fast_ext")\n'
        "except ImportError:\n"
        "    from pkg.build import compile\n\n"
        '    ext = compile(\n        name="fast_ext",\n        sources=["k.cu"],\n    )\n'
        "try:\n"
        '    other = importlib.import_module("other_ext")\n'
        "except ImportError:\n"
        "    other = None\n"
    )
    found = {i.module: (i.conditional, i.guarded) for i in import_facts(text).imports}
    assert found["fast_ext"] == (False, False)
    assert found["other_ext"] == (True, True)
