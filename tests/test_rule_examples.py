"""The one generic test: every rule's examples, both ways.

Each rule is run alone (with the prefilter on, so a needle that misses its own example
fails here) on each example written in its YAML: `flag` examples must produce at least
one finding of that rule, `pass` examples none.
"""

from __future__ import annotations

import importlib.util

import pytest

from tpucheck.analyze.rule_examples import rule_examples, run_example
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.model import Example, Rule

RULESET = load_ruleset()

CASES = [
    pytest.param(rule, example, expect, number, id=f"{rule.id}-{rule.name}-{expect}-{number}")
    for rule in RULESET.rules
    for expect, number, example in rule_examples(rule)
]


@pytest.mark.parametrize(("rule", "example", "expect", "number"), CASES)
def test_rule_example(rule: Rule, example: Example, expect: str, number: int) -> None:
    if "runtime" in rule.kinds() and importlib.util.find_spec("torch") is None:
        pytest.skip("runtime rules' examples are traced models: torch is not installed (the `trace` extra)")
    outcome = run_example(RULESET, rule, example, expect, number)
    assert outcome.ok, f"{rule.id} ({rule.source}) {expect} example: {outcome.problem}:\n{example.code}"


def test_every_category_has_rules() -> None:
    from tpucheck.findings import CATEGORIES

    assert {r.category for r in RULESET.rules} == set(CATEGORIES)


def test_rule_base_size() -> None:
    assert len(RULESET.rules) >= 40
