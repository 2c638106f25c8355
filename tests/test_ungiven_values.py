"""A branch testing a function's parameter for a string nothing in the product gives is
an option only outside callers pick (analyze/unpassed.py; audit BC: deepchem's `gmres`
solver, a missing op judged major). Given values, attributes and data keep the blocker."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SOLVE = '''import torch


def gmres(a, b):
    return torch.linalg.lstsq(a, b).solution


def solve(a, b, method=None):
    if method is None:
        method = "cg" if a.shape[-1] > 8 else "exact"
    if method == "exact":
        return torch.linalg.solve(a, b)
    elif method == "cg":
        return a @ b
    elif method == "gmres":
        return gmres(a, b)
    raise ValueError(method)
'''
TRAIN = "import torch\nfrom solvers.solve import solve\n\nx = solve(torch.eye(3), torch.ones(3, 1))\n"


def rows(root: Path, files: dict[str, str]) -> list[tuple[str, str, int, str, tuple[str, ...]]]:
    write_tree(root, {"solvers/__init__.py": "", "solvers/solve.py": SOLVE, "train.py": TRAIN, **files})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.path, f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule.startswith("UO"))


def test_a_solver_only_an_ungiven_value_selects_is_an_option(tmp_path: Path) -> None:
    found = rows(tmp_path, {})
    assert found == [("UO947", "solvers/solve.py", 5, "major", ("severity.option-only-component",))]
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (finding,) = [f for f in result.findings if f.rule == "UO947"]
    assert "no product module, config or launch script gives `'gmres'`" in finding.because[0].evidence


def test_a_caller_that_passes_the_value_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: the product asks for it, positionally."""
    train = TRAIN.replace("torch.ones(3, 1))", 'torch.ones(3, 1), "gmres")')
    assert rows(tmp_path, {"train.py": train}) == [("UO947", "solvers/solve.py", 5, "blocker", ())]


def test_a_config_that_gives_the_value_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: a shipped config picks it (`method: gmres`)."""
    assert rows(tmp_path, {"configs/solver.yaml": "solver:\n  method: gmres\n"}) == [("UO947", "solvers/solve.py", 5, "blocker", ())]


def test_a_dispatch_table_key_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: the value is a key the product looks up (`SOLVERS[name]`)."""
    table = 'SOLVERS = {"gmres": "iterative"}\n'
    assert rows(tmp_path, {"solvers/table.py": table}) == [("UO947", "solvers/solve.py", 5, "blocker", ())]


def test_an_attribute_read_from_data_is_no_option(tmp_path: Path) -> None:
    """Adversarial: `config.method` comes from a file the product reads where it runs."""
    solve = SOLVE.replace('elif method == "gmres":', 'elif a.config.method == "gmres":')
    assert rows(tmp_path, {"solvers/solve.py": solve}) == [("UO947", "solvers/solve.py", 5, "blocker", ())]


def test_a_finding_inside_the_branch_is_behind_the_option(tmp_path: Path) -> None:
    """The missing op written in the branch itself, under a parameter with no default."""
    inline = "import torch\n\n\ndef fit(a, b, method):\n    if method == \"lstsq\":\n        return torch.linalg.lstsq(a, b).solution\n    return torch.linalg.solve(a, b)\n"
    train = "import torch\nfrom solvers.fit import fit\n\nx = fit(torch.eye(3), torch.ones(3, 1), \"solve\")\n"
    found = rows(tmp_path, {"solvers/fit.py": inline, "train.py": train})
    assert ("UO947", "solvers/fit.py", 6, "major", ("guard.option", "severity.fallback")) in found


def test_a_docstring_that_lists_the_value_passes_nothing(tmp_path: Path) -> None:
    """Audit BD: fewshot-font-generation documents `algorithm: 'unbiased' / 'biased'`."""
    doc = '    """Solve a x = b.\n\n    method: "exact", "cg" or "gmres".\n    """\n    # "gmres" is slow\n'
    solve = SOLVE.replace("def solve(a, b, method=None):\n", "def solve(a, b, method=None):\n" + doc)
    assert rows(tmp_path, {"solvers/solve.py": solve}) == [("UO947", "solvers/solve.py", 5, "major", ("severity.option-only-component",))]
