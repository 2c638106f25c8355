"""Package modules nothing the product runs reaches (analyze/unimported.py; audits AV and
AX: a cupy rendezvous helper and an SSD decoder that only tests import were judged major).
A blocker in one is at most major, with the module named. Look-alikes keep the blocker:
another product module imports it (at load or in a function), a config or a parent's lazy
table names it, its folder loads modules by computed name, it is a script (a main block,
run by a launch script, an entry point), it sits outside any package, or most of the
package's modules are reached by nothing (a library of leaf modules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
RULE = "severity.unimported-module"
REASON = "in `pkg.rendezvous`, a module no script, entry point or package `__init__` of the product reaches by imports and no text names: its blocker stops only who imports it by hand"
HELPER = "import cupy\n\n\ndef setup(rank):\n    return cupy.cuda.nccl.NcclCommunicator(2, None, rank)\n"

BASE = {
    "pkg/__init__.py": "from pkg.core import Model\n",
    "pkg/core.py": "import torch\n\nfrom pkg.layers import Block\n\n\nclass Model(torch.nn.Module):\n    pass\n",
    "pkg/layers.py": "import torch\n\n\nclass Block(torch.nn.Module):\n    pass\n",
    "pkg/data.py": "def batches():\n    return []\n",
    "pkg/train.py": "from pkg.core import Model\nfrom pkg.data import batches\n\nif __name__ == '__main__':\n    Model()\n",
    "pkg/rendezvous.py": HELPER,
    "tests/test_rendezvous.py": "from pkg.rendezvous import setup\n",
}


def _rows(root: Path, files: dict[str, str], path: str = "pkg/rendezvous.py") -> list[tuple[str, int, str, tuple[str, ...]]]:
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.rule, f.span.line, f.severity, tuple(r.evidence for r in f.because if r.rule == RULE)) for f in result.findings if f.path == path]


def test_a_module_only_tests_import_holds_no_blocker(tmp_path: Path) -> None:
    rows = _rows(tmp_path / "repo", BASE)
    assert rows and rows[0][1:] == (1, "major", (REASON,))
    assert {severity for _, _, severity, _ in rows} == {"major"}


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ({"pkg/data.py": "from pkg import rendezvous\n"}, "another product module imports it"),
        ({"pkg/core.py": BASE["pkg/core.py"] + "\n\ndef distributed(rank):\n    from pkg.rendezvous import setup\n    return setup(rank)\n"}, "a reached module imports it in a function"),
        ({"configs/dist.yaml": "comm:\n  _target_: pkg.rendezvous.setup\n"}, "a config names it"),
        ({"pkg/__init__.py": "_import_structure = {'core': ['Model'], 'rendezvous': ['setup']}\n"}, "the parent's lazy table names it"),
        (
            {"pkg/registry.py": "import importlib\n\n\ndef load(name):\n    return importlib.import_module(f'pkg.{name}')\n", "pkg/__init__.py": "from pkg.core import Model\nfrom pkg.registry import load\n"},
            "a reached module of its folder loads modules by computed name",
        ),
        ({"pkg/rendezvous.py": HELPER + "\n\nif __name__ == '__main__':\n    setup(0)\n"}, "it is a script"),
        ({"scripts/run.sh": "python pkg/rendezvous.py --rank 0\n"}, "a launch script runs it"),
        ({"pyproject.toml": "[project]\nname = 'pkg'\n\n[project.scripts]\npkg-rdv = 'pkg.rendezvous:setup'\n"}, "an entry point runs it"),
        ({f"pkg/extra{i}.py": "x = 1\n" for i in range(3)}, "most package modules are reached by nothing: a library of leaves"),
    ],
)
def test_a_module_the_product_reaches_keeps_its_blocker(tmp_path: Path, extra: dict[str, str], why: str) -> None:
    rows = _rows(tmp_path / "repo", {**BASE, **extra})
    assert rows and rows[0][2] == "blocker" and not rows[0][3], why


def test_a_module_outside_any_package_is_a_script(tmp_path: Path) -> None:
    files = {k: v for k, v in BASE.items() if k != "pkg/rendezvous.py"}
    rows = _rows(tmp_path / "repo", {**files, "rendezvous.py": HELPER}, "rendezvous.py")
    assert rows and rows[0][2] == "blocker" and not rows[0][3]


def test_what_only_an_unreached_module_imports_is_unreached_too(tmp_path: Path) -> None:
    files = {**BASE, "pkg/rendezvous.py": "from pkg.nccl_ids import unique_id\n", "pkg/nccl_ids.py": HELPER}
    rows = _rows(tmp_path / "repo", files, "pkg/nccl_ids.py")
    assert rows and rows[0][2] == "major"
    assert rows[0][3] == (REASON.replace("pkg.rendezvous", "pkg.nccl_ids"),)


def test_a_root_init_makes_no_package_of_the_tree(tmp_path: Path) -> None:
    """A repository whose root holds an `__init__.py` (a checkout imported as a package)
    ends: its root modules are scripts, its packages are read as without it."""
    rows = _rows(tmp_path / "repo", {**BASE, "__init__.py": "", "run.py": "from pkg.core import Model\n"})
    assert rows and rows[0][2] == "major" and rows[0][3]
