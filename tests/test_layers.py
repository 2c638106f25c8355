"""The pipeline's layers import downward only (issue 13 point 3): a contract read from the
source with `ast`, so a wrong-way import fails here rather than in a review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tpucheck"

FORBIDDEN: dict[str, tuple[str, ...]] = {
    # rules as data: model, loader, selection
    "tpucheck.ruleset": ("tpucheck.analyzers", "tpucheck.engine", "tpucheck.reports", "tpucheck.cli", "tpucheck.api", "tpucheck.postscan"),
    # analysis: one file at a time
    "tpucheck.analyzers": ("tpucheck.engine", "tpucheck.reports", "tpucheck.config", "tpucheck.cli", "tpucheck.api", "tpucheck.settings", "tpucheck.postscan"),
    # formatting only
    "tpucheck.reports": ("tpucheck.analyzers", "tpucheck.engine", "tpucheck.cli", "tpucheck.api", "tpucheck.postscan", "tpucheck.discovery"),
    # stage one: which files
    "tpucheck.discovery": ("tpucheck.analyzers", "tpucheck.engine", "tpucheck.reports", "tpucheck.ruleset"),
    # reading the file only
    "tpucheck.config": ("tpucheck.reports", "tpucheck.engine", "tpucheck.analyzers", "tpucheck.cli", "tpucheck.api"),
    "tpucheck.settings": ("tpucheck.reports", "tpucheck.engine", "tpucheck.analyzers", "tpucheck.cli", "tpucheck.api"),
    "tpucheck.scoring": ("tpucheck.analyzers", "tpucheck.engine", "tpucheck.reports", "tpucheck.cli"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module the file imports, at any depth (a lazy import inside a function counts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def layer_of(name: str) -> str | None:
    return next((layer for layer in FORBIDDEN if name == layer or name.startswith(layer + ".")), None)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_go_down(path: Path) -> None:
    layer = layer_of(module_name(path))
    if layer is None:
        return
    wrong = sorted(
        target for target in imports(path)
        if any(target == banned or target.startswith(banned + ".") for banned in FORBIDDEN[layer])
    )  # fmt: skip
    assert wrong == [], f"{module_name(path)} ({layer}) imports {wrong}"


def test_the_contract_sees_every_layer() -> None:
    names = {module_name(p) for p in MODULES}
    for layer in FORBIDDEN:
        assert any(n == layer or n.startswith(layer + ".") for n in names), layer
