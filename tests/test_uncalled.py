"""Top-level definitions nothing the product runs uses (analyze/uncalled.py): a blocker
inside one, or at the import of a name only such definitions use, is major with its
reason (`severity.uncalled-definition`; audits AV and AZ: sparseml's SSD decoder, 4K4D's
unused `merge_faces`). Adversarial: a definition called from a script's main block, from
a used definition, re-exported by a package `__init__`, named in a config, named by a
string, registered by a decorator, or living in a module that reads its own namespace
keeps the blocker; and a project where most definitions are used by nothing (a library
of functions) keeps every blocker. A use in a comment, a test, a transparent decorator
(`@torch.no_grad()`) or only from other unused code does not make a definition used."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.analyze.uncalled import definitions
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
RULE = "severity.uncalled-definition"

GEO = """\
import torch
from mmcv.ops import DeformConv2d


def medians(x):
    return torch.median(x, dim=0)


def merge_faces(x):
    # medians(x) was used here once
    return torch.median(x, dim=0), pairs(x)


def pairs(x):
    return torch.triu_indices(len(x), len(x), device=x.device)


@torch.no_grad()
def deform(x):
    return DeformConv2d(4, 4, 3)(x)


def area(x):
    return x.sum()


def volume(x):
    return x.sum()
"""
TRAIN = """\
import torch
from proj.geo import medians, area, volume


def main():
    x = torch.zeros(3, 3)
    print(medians(x), area(x), volume(x))


if __name__ == "__main__":
    main()
"""
TEST = "from proj.geo import merge_faces\n\n\ndef test_merge():\n    merge_faces(None)\n"

INSIDE = "inside `{}`, which nothing the product runs calls or names (only unused code, tests or examples, if anything): its blocker stops only who calls it by hand"
IMPORT = "`DeformConv2d` is used only by `deform`, which nothing the product runs calls or names: the import runs at load, the op on no path the product runs"


def _tree(tmp_path: Path, **extra: str | None) -> Path:
    files: dict[str, str | None] = {"proj/__init__.py": "", "proj/geo.py": GEO, "train.py": TRAIN, "tests/test_geo.py": TEST}
    files.update(extra)
    return write_tree(tmp_path / "repo", {k: v for k, v in files.items() if v is not None})


def _found(root: Path) -> list[tuple[str, int, int, str, tuple[str, ...]]]:
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [
        (f.rule, f.span.line, f.span.column, f.severity, tuple(r.evidence for r in f.because if r.rule == RULE))
        for f in result.findings
        if f.path == "proj/geo.py" and f.rule in ("UO010", "UO983", "DEP036")
    ]


def test_blockers_in_definitions_nothing_runs_are_major_with_the_reason(tmp_path: Path) -> None:
    assert _found(_tree(tmp_path)) == [
        ("DEP036", 2, 22, "major", (IMPORT,)),  # only `deform`, which a transparent decorator wraps, uses it
        ("UO010", 6, 12, "blocker", ()),  # train.py's main block calls medians
        ("UO010", 11, 12, "major", (INSIDE.format("merge_faces"),)),  # a comment and a test name it, nothing else
        ("UO983", 15, 12, "major", (INSIDE.format("pairs"),)),  # only merge_faces, itself unused, calls it
    ]


def test_a_script_calling_it_keeps_the_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"tools/mesh.py": "from proj.geo import merge_faces\n\nmerge_faces(None)\n"})
    assert [(rule, severity) for rule, _, _, severity, _ in _found(root)] == [("DEP036", "major"), ("UO010", "blocker"), ("UO010", "blocker"), ("UO983", "blocker")]


def test_a_package_export_keeps_the_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"proj/__init__.py": "from .geo import merge_faces, deform\n"})
    assert [severity for _, _, _, severity, _ in _found(root)] == ["blocker", "blocker", "blocker", "blocker"]


@pytest.mark.parametrize(
    "extra",
    [
        {"proj/geo.py": GEO.replace("\n\n\ndef medians", '\n__all__ = [\n    "medians",\n    "merge_faces",\n]\n\n\ndef medians', 1)},
        {"setup.py": 'from setuptools import setup\n\nsetup(name="proj", entry_points={"console_scripts": ["merge=proj.geo:merge_faces"]})\n'},
        {"configs/mesh.yaml": "merge:\n  _target_: proj.geo.merge_faces\n"},
        {"proj/load.py": "import proj.geo as geo\n\nfn = getattr(geo, 'merge_faces')\n"},
    ],
    ids=["all-list", "console-script", "config", "string"],
)
def test_a_name_the_product_gives_keeps_the_blocker(tmp_path: Path, extra: dict[str, str]) -> None:
    # merge_faces is used (and pairs through it); deform, which nothing names, stays apart
    assert [severity for _, _, _, severity, _ in _found(_tree(tmp_path, **extra))] == ["major", "blocker", "blocker", "blocker"]


def test_a_registering_decorator_keeps_the_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"proj/geo.py": GEO.replace("@torch.no_grad()", "@OPS.register('deform')")})
    assert _found(root)[0][:4] == ("DEP036", 2, 22, "blocker")


def test_a_module_reading_its_namespace_keeps_its_definitions(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"proj/geo.py": GEO + "\n\ndef by_name(name):\n    return globals()[name]\n"})
    assert [severity for _, _, _, severity, _ in _found(root)] == ["blocker", "blocker", "blocker", "blocker"]


def test_a_module_getattr_is_called_by_the_import_system(tmp_path: Path) -> None:
    lazy = GEO.replace("def merge_faces(x):", "def __getattr__(x):")
    assert [severity for _, _, _, severity, _ in _found(_tree(tmp_path, **{"proj/geo.py": lazy}))] == ["major", "blocker", "blocker", "blocker"]


def test_a_library_of_functions_nothing_calls_keeps_every_blocker(tmp_path: Path) -> None:
    root = _tree(tmp_path, **{"train.py": "import torch\n\nprint(torch.zeros(1))\n"})
    assert [severity for _, _, _, severity, _ in _found(root)] == ["blocker", "blocker", "blocker", "blocker"]


def test_definitions_span_their_decorators_and_bodies() -> None:
    text = "import torch\n\n\n@torch.no_grad()\n@other\ndef f(x):\n    return x\n\n# note\nclass C:\n    pass\nX = 1\n"
    # a comment at column 0 before the next statement belongs to the definition above it
    assert definitions(text) == [("f", 4, 9, ("torch.no_grad", "other")), ("C", 10, 11, ())]
