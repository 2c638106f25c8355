"""Subpackages nothing else in the product loads are opt-in components of a library
(analyze/opt_in.py; blind set 60: NNI's TensorRT speed-up and AllenNLP's vision detector
capped two libraries banded B at D). A blocker inside one is at most major, with the
component named. Look-alikes keep the blocker: another product module imports it, the
parent's lazy table or a computed import may load it, a config names it, it is half the
product, a launch script runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
REASON = "in `pkg.speedup`, a subpackage nothing else in the product imports or names: an opt-in component, its blocker stops only its users"

BASE = {
    "pkg/__init__.py": "from pkg.core import Model\n",
    "pkg/core.py": "import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n",
    "pkg/utils.py": "def helper():\n    return 1\n",
    "pkg/data.py": "from pkg.utils import helper\n",
    "pkg/train.py": "from pkg.core import Model\nfrom pkg.data import helper\n",
    "pkg/speedup/__init__.py": "from pkg.speedup.engine import build\n",
    "pkg/speedup/engine.py": "import tensorrt as trt\n\n\ndef build(model):\n    return trt.Builder(model)\n",
    "tests/test_speedup.py": "from pkg.speedup import build\n",
}


def _rows(files: dict[str, str]) -> list[tuple[str, str, int, str, tuple[str, ...]]]:
    root = write_tree(Path(files.pop("__root__")), files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.rule, f.path, f.span.line, f.severity, tuple(r.evidence for r in f.because if r.rule == "severity.opt-in-component")) for f in result.findings if f.path.startswith("pkg/speedup/")]


def test_a_subpackage_nothing_else_loads_is_an_opt_in_component(tmp_path: Path) -> None:
    rows = _rows({"__root__": str(tmp_path / "repo"), **BASE})
    assert rows == [("DEP008", "pkg/speedup/engine.py", 1, "major", (REASON,))]


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ({"pkg/serve.py": "from pkg.speedup import build\n"}, "another product module imports it"),
        ({"pkg/__init__.py": "_import_structure = {'speedup': ['build'], 'core': ['Model']}\n"}, "the parent's lazy table names it"),
        ({"pkg/__init__.py": "import importlib\n\n\ndef load(name):\n    return importlib.import_module(f'.{name}', __package__)\n"}, "the parent loads children by computed name"),
        ({"configs/fast.yaml": "engine:\n  _target_: pkg.speedup.engine.build\n"}, "a config names it"),
        ({"scripts/run.sh": "python pkg/speedup/engine.py --fast\n"}, "a launch script runs it"),
        ({"pkg/__init__.py": "from pkg.core import Model\nfrom .speedup import *\n"}, "the parent star-imports it"),
        ({f"pkg/speedup/part{i}.py": "x = 1\n" for i in range(6)}, "it holds half the product's modules"),
    ],
)
def test_a_subpackage_the_product_reaches_keeps_its_blocker(tmp_path: Path, extra: dict[str, str], why: str) -> None:
    rows = _rows({"__root__": str(tmp_path / "repo"), **BASE, **extra})
    assert rows and all(severity == "blocker" and not reasons for _, _, _, severity, reasons in rows), why


def test_native_sources_under_an_opt_in_subpackage_keep_their_weight(tmp_path: Path) -> None:
    """An extension built from sources in the folder loads by its own name, from anywhere:
    the folder's Python imports say nothing of it."""
    files = {**BASE, "pkg/speedup/kernel.cu": "__global__ void scale_kernel(float* x) { x[0] *= 2.f; }\n"}
    rows = _rows({"__root__": str(tmp_path / "repo"), **files})
    assert ("CK003", "pkg/speedup/kernel.cu", 1, "blocker", ()) in rows
    assert ("DEP008", "pkg/speedup/engine.py", 1, "major", (REASON,)) in rows
