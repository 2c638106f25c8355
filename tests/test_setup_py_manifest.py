"""A package that installs on a TPU host is no work in a manifest, and setup.py's
install_requires is a manifest even though setup.py is read as Python too (audit BD: RVT's
`bitsandbytes==0.38.1` was a blocker in setup.py and info in CodeTF's requirements.txt)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
TRAIN = "import torch\nimport bitsandbytes as bnb\n\nopt = bnb.optim.Adam8bit([torch.zeros(2)])\n"


def rows(root: Path, manifest: dict[str, str]) -> list[tuple[str, str, int, str, tuple[str, ...]]]:
    write_tree(root, {"train.py": TRAIN, **manifest})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.path, f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "DEP004")


def test_a_pin_in_setup_py_is_as_a_pin_in_requirements(tmp_path: Path) -> None:
    setup = 'from setuptools import setup\nsetup(name="x", install_requires=["torch", "bitsandbytes==0.38.1"])\n'
    assert rows(tmp_path, {"setup.py": setup}) == [
        ("DEP004", "setup.py", 2, "info", ("severity.install",)),
        ("DEP004", "train.py", 2, "blocker", ()),
    ]
    assert rows(tmp_path / "r", {"requirements.txt": "torch\nbitsandbytes==0.38.1\n"}) == [
        ("DEP004", "requirements.txt", 2, "info", ("severity.install",)),
        ("DEP004", "train.py", 2, "blocker", ()),
    ]


def test_an_import_in_a_setup_script_is_code(tmp_path: Path) -> None:
    """Adversarial: a script named like no manifest keeps its import's blocker."""
    assert rows(tmp_path, {"setup_env.py": "import bitsandbytes\n"})[0][:4] == ("DEP004", "setup_env.py", 1, "blocker")
