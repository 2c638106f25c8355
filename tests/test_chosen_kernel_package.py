"""CUDA sources inside a package the product imports only under a try go with it (blind
set 24: BasicSR's deformable-conv, upfirdn2d and fused-act packages, built by a setup
helper whose names the build scan cannot read, were blockers while every import of them sits
in a `try`). Three things had to be read right: `from pkg.ops.dcn import (a, b)` is one
spelling of one module, not the same module imported two ways; the packages an import
loads on the way are imported by it; and a handler that binds an untested None or `object`
in the names' place is a known edit (`guard.placeholder`, major), not a working fallback.
Adversarial: a tested placeholder is a fallback (minor); one unconditional import anywhere
in the product keeps the kernels blockers; the same module imported two ways stays
required."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.analyze.imports import scan_imports
from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import Import
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
KERNEL = "__global__ void deform_kernel(float* out) { out[0] = 0.f; }\n"
DEFORM = "import torch\nfrom . import deform_ext\n\n\nclass DeformPack(torch.nn.Module):\n    pass\n\n\ndef deform_fn(x):\n    return deform_ext.forward(x)\n"
UNTESTED = """\
try:
    from pkg.ops.dcn import (DeformPack,
                             deform_fn)
except ImportError:
    print('dcn is not built')
    DeformPack = object
    deform_fn = None


class Block(DeformPack):
    pass
"""
TESTED = """\
import torch
try:
    from pkg.ops.dcn import (DeformPack,
                             deform_fn)
except ImportError:
    DeformPack = deform_fn = None


def block(x):
    if deform_fn is None:
        return torch.nn.functional.conv2d(x, torch.ones(1, 1, 3, 3))
    return deform_fn(x)
"""


def _kernels(root: Path, util: str, extra: dict[str, str] | None = None) -> list[tuple[str, str, int, str, list[str]]]:
    files = {
        "pkg/__init__.py": "",
        "pkg/archs/__init__.py": "",
        "pkg/archs/util.py": util,
        # `pkg/ops/` has no __init__.py: `pkg.ops.dcn` is the top of its own chain
        "pkg/ops/dcn/__init__.py": "from .deform import DeformPack, deform_fn\n",
        "pkg/ops/dcn/deform.py": DEFORM,
        "pkg/ops/dcn/src/deform_kernel.cu": KERNEL,
        "train.py": "from pkg.archs.util import *\n",
        **(extra or {}),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(dedent(text))
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.rule, f.path, f.span.line, f.severity, [r.rule for r in f.because]) for f in result.findings if f.rule == "CK003"]


def test_kernels_of_a_package_imported_under_a_placeholder_try_are_a_known_edit(tmp_path: Path) -> None:
    assert _kernels(tmp_path, UNTESTED) == [
        ("CK003", "pkg/ops/dcn/src/deform_kernel.cu", 1, "major", ["guard.placeholder", "severity.kernel-fallback"])
    ]


def test_a_tested_placeholder_is_a_fallback(tmp_path: Path) -> None:
    assert _kernels(tmp_path, TESTED) == [
        ("CK003", "pkg/ops/dcn/src/deform_kernel.cu", 1, "minor", ["fallback.guarded-module", "severity.kernel-fallback"])
    ]


def test_one_unconditional_import_keeps_the_kernels_blockers(tmp_path: Path) -> None:
    extra = {"pkg/archs/video.py": "from pkg.ops.dcn import DeformPack\n\n\nclass Video(DeformPack):\n    pass\n"}
    assert _kernels(tmp_path, TESTED, extra) == [("CK003", "pkg/ops/dcn/src/deform_kernel.cu", 1, "blocker", [])]


def test_the_same_module_imported_two_ways_stays_required(tmp_path: Path) -> None:
    two_ways = "try:\n    from pkg.ops.dcn import deform_fn\nexcept ImportError:\n    from .ops.dcn import deform_fn\n"
    extra = {"pkg/loader.py": two_ways, "train.py": "import pkg.loader\n"}
    assert [(rule, severity) for rule, _, _, severity, _ in _kernels(tmp_path, "", extra)] == [("CK003", "blocker")]


def test_a_multi_line_import_under_a_try_is_read_with_its_handler() -> None:
    assert scan_imports(dedent(UNTESTED)) == [
        Import(0, "pkg.ops.dcn.DeformPack", True, False, True, placeholder=True),
        Import(0, "pkg.ops.dcn.deform_fn", True, False, True, placeholder=True),
    ]
    # a tested placeholder is a fallback, not a placeholder
    assert [i.placeholder for i in scan_imports(dedent(TESTED)) if i.module.startswith("pkg")] == [False, False]
    # a handler that gives up makes a multi-line import required, as a one-line one
    gives_up = "try:\n    from pkg.ops import (a,\n                         b)\nexcept ImportError:\n    raise ImportError('build pkg.ops first')\n"
    assert scan_imports(gives_up) == [Import(0, "pkg.ops.a", False, False), Import(0, "pkg.ops.b", False, False)]
