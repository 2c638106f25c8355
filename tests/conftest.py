from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.analyze import AnalysisContext, analyze_text, build_context
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.loader import builtin_rules_dir
from tpucheck.ruleset.model import Ruleset

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_ruleset() -> Ruleset:
    """The engine tests' own rules plus the built-in device contexts."""
    return load_ruleset([FIXTURES / "test_rules.yaml", builtin_rules_dir() / "contexts.yaml"], builtin=False)


@pytest.fixture(scope="session")
def test_context() -> AnalysisContext:
    return build_context(fixture_ruleset())


def findings_of(context: AnalysisContext, code: str, path: str = "mod.py", kinds: tuple[str, ...] = ("python",)) -> list[tuple[str, int, int]]:
    """(rule, line, column) of every match, in position order."""
    result = analyze_text(path, kinds, code, context)
    assert result.error is None, result.error
    return sorted((m.rule_id, m.span.line, m.span.column) for m in result.matches)


def notebook_json(*cells: tuple[str, list[str]]) -> str:
    """An nbformat-4 notebook from (cell type, source lines) pairs."""
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": source, **({"execution_count": None, "outputs": []} if kind == "code" else {})}
                for kind, source in cells
            ],
        }
    )


SYNC_NOTEBOOK = notebook_json(
    ("markdown", ["# title\n"]),
    ("code", ["import torch\n"]),
    ("code", ["x = 1\n", "torch.cuda.synchronize()\n"]),
)
"""A notebook whose second code cell (cell 3, counting every cell) syncs on line 2."""


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write a fixture repository: text is dedented, bytes are written as they are."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(dedent(content).lstrip("\n"), encoding="utf-8")
    return root
