"""A module that imports a CUDA-only inference engine at its top is that engine's
integration (rules/judgement.yaml `cuda_engines`): the engine's own finding prices its
replacement, and the module's other CUDA-isms are set aside with that reason, never
dropped. Look-alikes that keep their findings: a lazy import inside a function, a project
module that shares the engine's name, a non-CUDA part of the same toolkit."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

RUNNER = """\
{imports}
import torch


def build(model):
    model = model.cuda()
    torch.cuda.empty_cache()
    return model
"""


def scanned(root: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text))
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


def test_an_engines_module_is_set_aside_apart_from_the_engine(tmp_path: Path) -> None:
    result = scanned(tmp_path, {"pkg/__init__.py": "", "pkg/trt_runner.py": RUNNER.format(imports="import tensorrt as trt\nfrom cuda import cudart")})
    assert [(f.rule, f.span.line, f.severity) for f in result.findings if f.path == "pkg/trt_runner.py"] == [
        ("DEP008", 1, "blocker"),
        ("DEP021", 2, "blocker"),
    ]
    aside = [(f.rule, f.span.line, f.because[-1].rule, f.because[-1].evidence) for f in result.set_aside]
    why = "`tensorrt` imported at the top of pkg/trt_runner.py: the module drives a CUDA-only engine and is replaced with it"
    assert aside == [("CA003", 7, "set-aside.cuda-engine", why), ("CA007", 8, "set-aside.cuda-engine", why)]


@pytest.mark.parametrize(
    "files",
    [
        # a lazy import: the module has other work than the engine's
        {"pkg/__init__.py": "", "pkg/runner.py": RUNNER.format(imports="def engine():\n    import tensorrt\n    return tensorrt")},
        # the project's own module of that name
        {"pkg/__init__.py": "", "tensorrt.py": "X = 1\n", "pkg/runner.py": RUNNER.format(imports="import tensorrt")},
        # Polygraphy's ONNX tools are not its CUDA backend
        {"pkg/__init__.py": "", "pkg/runner.py": RUNNER.format(imports="from polygraphy.backend.onnx import fold_constants")},
    ],
    ids=["lazy", "own-module", "onnx-part"],
)
def test_look_alikes_keep_their_findings(tmp_path: Path, files: dict[str, str]) -> None:
    result = scanned(tmp_path, files)
    assert [f.rule for f in result.findings if f.path == "pkg/runner.py" and f.rule in ("CA003", "CA007")] == ["CA003", "CA007"]
    assert not [f for f in result.set_aside if f.path == "pkg/runner.py" and f.because[-1].rule == "set-aside.cuda-engine"]
