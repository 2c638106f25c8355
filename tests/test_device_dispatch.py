"""CUDA sources compiled only under a device test keep a fallback (analyze/dispatch.py).

The shape (written here from scratch): an op module builds its extension in a small
function that the op calls only as the last test of an `and` whose earlier test asks for a
CUDA tensor, with a PyTorch path after it. Every look-alike that a TPU host would still
build, or that has no other path, keeps its blockers.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.analyze.dispatch import jit_facts
from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import JitBuild
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = "__global__ void blur_kernel(float* y) {}\n"

LOADER = """\
import torch.utils.cpp_extension


def compile_op(name, sources, folder):
    paths = [folder + "/" + s for s in sources]
    return torch.utils.cpp_extension.load(name=name, sources=paths)
"""

GATED_OP = """\
import os
import torch
from pkg import builder

_ext = None


def _build():
    global _ext
    if _ext is None:
        _ext = builder.compile_op("blur_ext", ["blur.cpp", "blur.cu"], os.path.dirname(__file__))
    return True


def blur(x, impl="fast"):
    if impl == "fast" and {test} and _build():
        return _ext.blur(x)
    return torch.nn.functional.avg_pool2d(x, 3, 1, 1)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text))


def kernel_findings(root: Path) -> list[tuple[str, str, int, str, tuple[str, ...]]]:
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [
        (f.rule, f.path, f.span.line, f.severity, tuple(r.rule for r in f.because))
        for f in result.findings
        if f.inventory == "kernel"
    ]


def project(op: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/builder.py": LOADER,
        "pkg/ops/__init__.py": "",
        "pkg/ops/blur.py": op,
        "pkg/ops/blur.cu": KERNEL,
        "pkg/ops/blur.cpp": "#include <torch/extension.h>\n",
        "train.py": "from pkg.ops.blur import blur\n",
    }


DISPATCHED = ("fallback.device-dispatch", "severity.kernel-fallback")


@pytest.mark.parametrize("test", ['x.device.type == "cuda"', "x.is_cuda", "torch.cuda.is_available()"])
def test_a_build_reached_only_after_a_device_test_keeps_a_fallback(tmp_path: Path, test: str) -> None:
    write(tmp_path, project(GATED_OP.format(test=test)))
    assert kernel_findings(tmp_path) == [
        ("CK002", "pkg/builder.py", 6, "info", DISPATCHED),
        ("CK003", "pkg/ops/blur.cu", 1, "info", DISPATCHED),
    ]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (kernel,) = [f for f in result.findings if f.rule == "CK003"]
    assert kernel.because[0].evidence == (
        f"pkg/ops/blur.py:11 builds it only under `{test}` (line 16); other devices run the code after it"
    )


@pytest.mark.parametrize(
    "op",
    [
        # the build runs before the device test: every device compiles it
        GATED_OP.replace('impl == "fast" and {test} and _build()', '_build() and x.device.type == "cuda"'),
        # `or`: the build runs whenever the device test fails
        GATED_OP.replace('impl == "fast" and {test} and _build()', 'x.device.type == "cuda" or _build()'),
        # a string "cuda" compared with something that is not a device's type
        GATED_OP.replace("{test}", 'impl_backend == "cuda"'),
        # no other way: the fast path is the only path
        GATED_OP.replace("        return _ext.blur(x)\n    return torch.nn.functional.avg_pool2d(x, 3, 1, 1)\n", "        x = x * 2\n    return _ext.blur(x)\n").replace("{test}", "x.is_cuda"),
        # a second call with no test at all
        GATED_OP.replace("{test}", "x.is_cuda") + "\n_build()\n",
    ],
    ids=["build-first", "or", "not-a-device", "no-other-way", "unguarded-call"],
)
def test_look_alikes_keep_their_blockers(tmp_path: Path, op: str) -> None:
    assert "{test}" not in op and "_build()" in op  # each look-alike was written as meant
    write(tmp_path, project(op))
    assert kernel_findings(tmp_path) == [
        ("CK002", "pkg/builder.py", 6, "blocker", ()),
        ("CK003", "pkg/ops/blur.cu", 1, "blocker", ()),
    ]


def test_a_loader_one_caller_reaches_without_a_test_keeps_its_blocker(tmp_path: Path) -> None:
    files = project(GATED_OP.format(test="x.is_cuda"))
    files["pkg/ops/sharpen.py"] = 'import os\nfrom pkg import builder\n\n_ext = builder.compile_op("sharpen", ["sharpen.cu"], os.path.dirname(__file__))\n'
    files["pkg/ops/sharpen.cu"] = KERNEL
    write(tmp_path, files)
    assert kernel_findings(tmp_path) == [
        ("CK002", "pkg/builder.py", 6, "blocker", ()),
        ("CK003", "pkg/ops/blur.cu", 1, "info", DISPATCHED),
        ("CK003", "pkg/ops/sharpen.cu", 1, "blocker", ()),
    ]


def test_facts_name_the_callee_sources_and_guard() -> None:
    builds, loaders = jit_facts(GATED_OP.format(test="x.is_cuda"))
    assert builds == (JitBuild("compile_op", ("blur.cpp", "blur.cu"), "`x.is_cuda` (line 16)", 11, "_ext", "blur_ext"),)
    assert loaders == ()
    assert jit_facts(LOADER) == ((), ("compile_op",))
    assert jit_facts("def f(:\n  'a.cu'\n") == ((), ())  # a file that does not parse has none


OPTIONAL_BUILD = """\
import os

try:
    from . import blur_ext
except ImportError:
{handler}

def blur(x):
    return blur_ext.blur(x)
"""

JIT_BUILD = """\
    from torch.utils.cpp_extension import load
    here = os.path.dirname(__file__)
    blur_ext = load("blur", sources=[os.path.join(here, "src", "blur.cpp"), os.path.join(here, "src", "blur_kernel.cu")])
"""


def optional_build_project(handler: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from pkg.ops.blur import blur\n",
        "pkg/ops/blur.py": OPTIONAL_BUILD.format(handler=handler),
        "pkg/ops/src/blur_kernel.cu": KERNEL,
        "pkg/ops/src/blur.cpp": "#include <torch/extension.h>\n",
        "train.py": "from pkg.ops import blur\n",
    }


def opt_in(test: str) -> str:
    return f"    if {test}:\n" + "\n".join("    " + line for line in JIT_BUILD.splitlines()) + "\n"


def test_a_build_only_when_the_environment_asks_for_it_keeps_a_fallback(tmp_path: Path) -> None:
    # The prebuilt extension is imported in a try; its handler builds it only when the
    # user sets an environment variable: nobody's default install compiles the kernel.
    write(tmp_path, optional_build_project(opt_in('os.getenv("OPS_JIT") == "1"')))
    built = ("fallback.opt-in-build", "severity.kernel-fallback")
    assert kernel_findings(tmp_path) == [
        ("CK002", "pkg/ops/blur.py", 9, "info", built),
        ("CK003", "pkg/ops/src/blur_kernel.cu", 1, "info", built),
    ]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (kernel,) = [f for f in result.findings if f.rule == "CK003"]
    assert kernel.because[0].evidence == (
        'pkg/ops/blur.py:9 builds it only under `os.getenv("OPS_JIT") == "1"` (line 6), off unless the environment sets it'
    )


@pytest.mark.parametrize(
    "handler",
    [
        JIT_BUILD,  # the handler always builds: another way to the same extension
        opt_in('os.getenv("OPS_JIT", "1") == "1"'),  # on unless the user turns it off
        opt_in('os.environ.get("OPS_JIT", "yes") in ("yes", "1")'),
        opt_in("toolkit_found()"),  # a test of the machine, not a setting the user opts into
    ],
    ids=["always", "on-by-default", "on-by-default-in", "machine-test"],
)
def test_a_build_that_runs_by_default_keeps_the_blockers(tmp_path: Path, handler: str) -> None:
    write(tmp_path, optional_build_project(handler))
    line = 8 if handler is JIT_BUILD else 9
    assert kernel_findings(tmp_path) == [
        ("CK002", "pkg/ops/blur.py", line, "blocker", ()),
        ("CK003", "pkg/ops/src/blur_kernel.cu", 1, "blocker", ()),
    ]


def test_the_facts_come_back_from_the_cache(tmp_path: Path) -> None:
    # A warm scan rebuilds the graph from cached facts: the verdicts must be the same.
    write(tmp_path, project(GATED_OP.format(test="x.is_cuda")))
    write(tmp_path, {"pkg/ops/sharpen.py": optional_build_project(opt_in('os.getenv("OPS_JIT") == "1"'))["pkg/ops/blur.py"], "pkg/ops/src/blur_kernel.cu": KERNEL})

    def verdicts() -> list[tuple[str, str, str, tuple[str, ...]]]:
        result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=True))
        return [(f.rule, f.path, f.severity, tuple(r.evidence for r in f.because)) for f in result.findings if f.inventory == "kernel"]

    cold = verdicts()
    assert [(rule, path, severity) for rule, path, severity, _ in cold] == [
        ("CK002", "pkg/builder.py", "info"),
        ("CK003", "pkg/ops/blur.cu", "info"),
        ("CK002", "pkg/ops/sharpen.py", "info"),
        ("CK003", "pkg/ops/src/blur_kernel.cu", "info"),
    ]
    assert (tmp_path / ".tpucheck_cache").is_dir()
    assert verdicts() == cold


def test_sources_named_through_a_variable_are_the_builds(tmp_path: Path) -> None:
    """Blind set 14 (stylegan2-ada): `sources = ["op.cpp", "op.cu"]`, then the paths joined in
    a comprehension, then `load(..., sources=sources)`: the literals of what the function
    assigns to the name are the build's sources. Adversarial: a name bound to something
    else in another function names nothing."""
    op = GATED_OP.replace(
        '        _ext = builder.compile_op("blur_ext", ["blur.cpp", "blur.cu"], os.path.dirname(__file__))\n',
        '        sources = ["blur.cpp", "blur.cu"]\n        sources = [os.path.join(os.path.dirname(__file__), s) for s in sources]\n'
        '        _ext = builder.compile_op("blur_ext", sources, os.path.dirname(__file__))\n',
    ).format(test="x.is_cuda")
    builds, _ = jit_facts(op)
    assert [(b.callee, b.sources, b.guard) for b in builds] == [("compile_op", ("blur.cpp", "blur.cu"), "`x.is_cuda` (line 18)")]
    elsewhere = 'import torch.utils.cpp_extension\n\n\ndef names():\n    sources = ["a.cu"]\n    return sources\n\n\ndef build(sources):\n    return torch.utils.cpp_extension.load(name="x", sources=sources)\n'
    assert jit_facts(elsewhere)[0] == ()
    write(tmp_path, project(op))
    assert kernel_findings(tmp_path) == [
        ("CK002", "pkg/builder.py", 6, "info", DISPATCHED),
        ("CK003", "pkg/ops/blur.cu", 1, "info", DISPATCHED),
    ]


MODULE_GATED = """\
import os
import platform

import torch
import torch.nn.functional as F
from torch.utils.cpp_extension import load

if platform.system() == "Linux" and torch.cuda.is_available():
    here = os.path.dirname(__file__)
    fused = load("fused", sources=[os.path.join(here, "fused.cpp"), os.path.join(here, "fused_kernel.cu")])


def fused_relu(x, bias):
    if platform.system() == "Linux" and torch.cuda.is_available() and x.device.type != "cpu":
        return fused.fused_bias_act(x, bias)
    else:
        return F.leaky_relu(x + bias, 0.2)
"""


def test_a_module_level_build_under_a_cuda_test_with_a_dispatching_caller_keeps_a_fallback() -> None:
    """Blind set 51 (GPEN's StyleGAN2 ops): the build at the module's top runs only with
    CUDA, and the op's function picks the PyTorch path by the same test."""
    builds, _ = jit_facts(MODULE_GATED)
    assert [(b.target, b.guard) for b in builds] == [("fused", "`torch.cuda.is_available()` (line 8)")]


def test_a_module_level_build_under_a_cuda_test_with_no_other_path_keeps_nothing() -> None:
    """Adversarial: the functions call the extension whatever the device (a TPU host
    fails there), or the build sits under a test of something else."""
    no_other_way = MODULE_GATED.replace(
        '    if platform.system() == "Linux" and torch.cuda.is_available() and x.device.type != "cpu":\n        return fused.fused_bias_act(x, bias)\n    else:\n        return F.leaky_relu(x + bias, 0.2)\n',
        "    return fused.fused_bias_act(x, bias)\n",
    )
    assert no_other_way != MODULE_GATED
    assert [b.guard for b in jit_facts(no_other_way)[0]] == [""]
    other_test = MODULE_GATED.replace('if platform.system() == "Linux" and torch.cuda.is_available():\n    here', 'if platform.system() == "Linux":\n    here')
    assert other_test != MODULE_GATED
    assert [b.guard for b in jit_facts(other_test)[0]] == [""]
