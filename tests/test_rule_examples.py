"""The one generic test: every rule's examples, both ways.

Each rule is run alone (with the prefilter on, so a needle that misses its own example
fails here) on each example written in its YAML: `flag` examples must produce at least
one finding of that rule, `pass` examples none.
"""

from __future__ import annotations

import re

import pytest

from tpucheck.analyzers import analyze_text, build_context
from tpucheck.discovery import classify
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.model import Example, Rule

RULESET = load_ruleset()
DEFAULT_PATHS = {"python": "example.py", "native": "example.cu", "dependency": "requirements.txt"}


def example_path(rule: Rule, example: Example) -> str:
    if example.path:
        return example.path
    kind = rule.matchers[0].kind
    if kind == "file":
        glob = rule.matchers[0].patterns[0]
        return re.sub(r"\*+", "example", glob.replace("**/", "")).lstrip("/")
    return DEFAULT_PATHS.get(kind, "example.py")


def run_rule(rule: Rule, example: Example) -> list[str]:
    path = example_path(rule, example)
    context = build_context(RULESET.with_rules((rule,)))
    kinds = classify(path, context.other_globs)
    assert kinds, f"{rule.id}: example path {path!r} is not a file tpucheck analyzes"
    result = analyze_text(path, kinds, example.code, context)
    assert result.error is None, f"{rule.id}: example does not analyze: {result.error}"
    return [m.rule_id for m in result.matches if m.rule_id == rule.id]


CASES = [
    pytest.param(rule, example, expect, id=f"{rule.id}-{rule.name}-{expect}-{number}")
    for rule in RULESET.rules
    for expect, examples in (("flag", rule.flag_examples), ("pass", rule.pass_examples))
    for number, example in enumerate(examples, start=1)
]


@pytest.mark.parametrize(("rule", "example", "expect"), CASES)
def test_rule_example(rule: Rule, example: Example, expect: str) -> None:
    found = run_rule(rule, example)
    if expect == "flag":
        assert found, f"{rule.id} ({rule.source}) did not flag:\n{example.code}"
    else:
        assert not found, f"{rule.id} ({rule.source}) flagged code it must not:\n{example.code}"


def test_every_category_has_rules() -> None:
    from tpucheck.findings import CATEGORIES

    assert {r.category for r in RULESET.rules} == set(CATEGORIES)


def test_rule_base_size() -> None:
    assert len(RULESET.rules) >= 40
