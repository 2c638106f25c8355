"""JIT builds of C/C++ sources alone (`cpp_extension.load` with `.cpp` files, no CUDA
asked): they compile with the host's C++ compiler and their ops take CPU tensors, so on a
TPU host they are a detour to the host (major), not a kernel to write (blind set 61: pyro's
`cpp_spanning_tree` capped a library banded A at grade D). Look-alikes keep the blocker: a
CUDA source among the sources, a keyword that asks for CUDA, sources the reading cannot name."""

from __future__ import annotations

from conftest import write_tree

from tpucheck.analyze.dispatch import host_only_loads
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
REASON = "the build compiles C/C++ sources only, with the host's compiler: its ops take CPU tensors, a detour to the host: at most major"

CODE = """\
import os

from torch.utils.cpp_extension import load

HERE = os.path.dirname(__file__)


def tree_module():
    path = os.path.join(HERE, "tree.cpp")
    return load(name="tree_cpp", sources=[path], extra_cflags=["-O2"])


def mixed():
    return load("mixed", [os.path.join(HERE, "a.cpp"), os.path.join(HERE, "a.cu")])


def asks_for_cuda():
    return load("fast", sources=["b.cpp"], extra_cuda_cflags=["-O3"])


def computed(names):
    return load("many", sources=[n + ".cpp" for n in names])
"""


def test_a_build_of_host_sources_is_a_detour_not_a_kernel(tmp_path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/ext.py": CODE})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    rows = [(f.span.line, f.severity, tuple(r.evidence for r in f.because)) for f in result.findings if f.rule == "CK002"]
    assert rows == [
        (10, "major", (REASON,)),
        # adversarial: a CUDA source, a CUDA keyword, sources not named as literals
        (14, "blocker", ()),
        (18, "blocker", ()),
        (22, "blocker", ()),
    ]


def test_host_only_loads_reads_names_in_lists_and_ignores_other_loads() -> None:
    assert host_only_loads(CODE) == frozenset({10})
    assert host_only_loads("import json\nwith open('a.cpp') as f:\n    json.load(f)\n") == frozenset()
