"""Run a rule's own examples: the contract every rule carries, ours and our users'.

A `flag` example must produce at least one finding of its rule and a `pass` example none,
with the rule run alone and the prefilter and screen on, so that a needle or a screen
that misses the rule's own example fails here. The test suite runs this over the built-in
rules; `tpucheck rules test` runs it over a team's rule files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tpucheck.analyze import analyze_text, build_context
from tpucheck.discover.walk import classify
from tpucheck.ruleset.examples import example_path
from tpucheck.ruleset.model import Example, Rule, Ruleset


@dataclass(frozen=True, slots=True)
class ExampleOutcome:
    rule: Rule
    expect: str
    """"flag" or "pass"."""
    number: int
    """1-based among the rule's examples of that kind."""
    example: Example
    problem: str | None
    """None when the example behaved; else what went wrong, in one line."""

    @property
    def ok(self) -> bool:
        return self.problem is None


_EXPECT = re.compile(r"(?:#|//)\s*expect\s*$")


def expected_lines(code: str) -> set[int]:
    """Lines a flag example marks with a trailing `# expect` (`// expect` in C, CUDA and
    the like), as semgrep's `# ruleid:`: the finding must be there, not anywhere."""
    return {number for number, line in enumerate(code.splitlines(), start=1) if _EXPECT.search(line)}


def run_example(ruleset: Ruleset, rule: Rule, example: Example, expect: str, number: int = 1) -> ExampleOutcome:
    if "runtime" in rule.kinds():  # a model to trace, not code to scan (needs torch)
        from tpucheck.trace.examples import runtime_example_problem

        return ExampleOutcome(rule, expect, number, example, runtime_example_problem(ruleset, rule, example.code, expect, number))
    path = example_path(rule, example)
    context = build_context(ruleset.with_rules((rule,)))
    kinds = classify(path, context.other_globs)
    if not kinds:
        return ExampleOutcome(rule, expect, number, example, f"example path {path!r} is not a file tpucheck analyzes")
    result = analyze_text(path, kinds, example.code, context)
    if result.error is not None:
        return ExampleOutcome(rule, expect, number, example, f"example does not analyze: {result.error.message}")
    found = [m for m in result.matches if m.rule_id == rule.id]
    if expect == "flag" and not found:
        return ExampleOutcome(rule, expect, number, example, "not flagged")
    if expect == "flag":
        wanted = expected_lines(example.code)
        flagged = {m.span.line for m in found}
        missed = sorted(wanted - flagged)
        if missed:
            got = ", ".join(str(line) for line in sorted(flagged))
            return ExampleOutcome(rule, expect, number, example, f"not flagged on line {', '.join(map(str, missed))} marked `# expect` (flagged on {got})")
    if expect == "pass" and found:
        lines = ", ".join(str(m.span.line) for m in found)
        return ExampleOutcome(rule, expect, number, example, f"flagged on line {lines}")
    return ExampleOutcome(rule, expect, number, example, None)


def rule_examples(rule: Rule) -> list[tuple[str, int, Example]]:
    return [
        (expect, number, example)
        for expect, examples in (("flag", rule.flag_examples), ("pass", rule.pass_examples))
        for number, example in enumerate(examples, start=1)
    ]


def check_rule(ruleset: Ruleset, rule: Rule) -> list[ExampleOutcome]:
    return [run_example(ruleset, rule, example, expect, number) for expect, number, example in rule_examples(rule)]
