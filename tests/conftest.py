from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.analyzers import AnalysisContext, analyze_text, build_context
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
