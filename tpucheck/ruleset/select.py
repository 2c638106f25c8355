"""`--select` / `--ignore`: pick rules by id, id prefix, name or category."""

from __future__ import annotations

import difflib
import re
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


def find_rule(ruleset: Ruleset, ref: str) -> Rule | None:
    """The rule with this id (any case) or name."""
    wanted = ref.strip().lower()
    return next((rule for rule in ruleset.rules if wanted in (rule.id.lower(), rule.name.lower())), None)


_ID_PARTS = re.compile(r"([a-z]+)0*(\d+)")


def close_rules(ruleset: Ruleset, wanted: str) -> list[str]:
    """Up to three ids or names like `wanted`: the same id without its zero padding first
    (`ca1`, `CA01` -> CA001), then difflib's closest, ties in alphabetical order."""
    spelled: dict[str, str] = {}
    for rule in ruleset.rules:
        spelled.setdefault(rule.id.lower(), rule.id)
        spelled.setdefault(rule.name.lower(), rule.name)
    parts = _ID_PARTS.fullmatch(wanted)
    same_id = [key for key in spelled if parts and (m := _ID_PARTS.fullmatch(key)) and m.groups() == parts.groups()]
    similar = difflib.get_close_matches(wanted, list(spelled), n=len(spelled), cutoff=0.6)
    ratio = {key: difflib.SequenceMatcher(None, wanted, key).ratio() for key in similar}
    ranked = same_id + sorted((k for k in similar if k not in same_id), key=lambda k: (-ratio[k], k))
    return [spelled[key] for key in ranked[:3]]
