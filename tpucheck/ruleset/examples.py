"""The file name a rule's example is analyzed as: one answer for the example runner
(`tpucheck.analyze.rule_examples`) and the rule docs, so that the docs show an example under the very
name it was tested as."""

from __future__ import annotations

import re

from tpucheck.ruleset.model import Example, Rule

DEFAULT_EXAMPLE_PATHS = {"native": "example.cu", "dependency": "requirements.txt", "config": "config.yaml", "option": "run.sh"}
"""By the first matcher's kind; every other kind reads Python, as example.py."""


def example_path(rule: Rule, example: Example) -> str:
    """The example's own `path`, else a name of the kind the rule's first matcher reads
    (for a `file` matcher, its first glob with each `*` spelled "example")."""
    if example.path:
        return example.path
    first = rule.matchers[0] if rule.matchers else None
    if first is not None and first.kind == "file" and first.patterns:
        return re.sub(r"\*+", "example", first.patterns[0].replace("**/", "")).lstrip("/")
    return DEFAULT_EXAMPLE_PATHS.get(first.kind if first else "", "example.py")
