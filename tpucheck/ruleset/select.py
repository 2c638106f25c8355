"""`--select` / `--ignore`: pick rules by id, id prefix, name or category."""

from __future__ import annotations

from collections.abc import Iterable

from tpucheck.findings import CATEGORIES
from tpucheck.ruleset.model import Rule, Ruleset


class SelectionError(ValueError):
    """A selector that names nothing: a typo must not silently select zero rules."""


def rule_selected(rule: Rule, selector: str) -> bool:
    """Whether `selector` (id, upper-case id prefix, name, category or ALL) names `rule`."""
    return (
        selector == "ALL"
        or rule.id == selector
        or rule.name == selector
        or rule.category == selector
        or (selector.isupper() and rule.id.startswith(selector))
    )


def unknown_selectors(ruleset: Ruleset, selectors: Iterable[str]) -> list[str]:
    """The selectors that name no rule: a typo must not silently select zero rules."""
    return [s for s in selectors if s not in CATEGORIES and not any(rule_selected(rule, s) for rule in ruleset.rules)]


def select_rules(ruleset: Ruleset, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> Ruleset:
    select = [s.strip() for s in select if s.strip()]
    ignore = [s.strip() for s in ignore if s.strip()]
    for selector in unknown_selectors(ruleset, (*select, *ignore)):
        raise SelectionError(f"unknown rule selector {selector!r}: not a rule id, id prefix, name or category")
    chosen = [r for r in ruleset.rules if not select or any(rule_selected(r, s) for s in select)]
    chosen = [r for r in chosen if not any(rule_selected(r, s) for s in ignore)]
    return ruleset.with_rules(tuple(chosen))
