"""Problems in rule files: where they are and what to call the field, so that a rule
author reads `rules/x.yaml:12: rule CK001 match.call: ...` rather than a JSON path."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tpucheck.ruleset.yamlsource import LocatedYaml

if TYPE_CHECKING:
    import jsonschema


@dataclass(frozen=True, slots=True)
class RuleProblem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


def field_name(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def schema_problems(doc: LocatedYaml, display: str, schema: dict[str, Any]) -> list[RuleProblem]:
    """One problem per schema violation, at its line, named as the rule file's author
    would look for it. (jsonschema is imported here: a run whose rules come from the store
    never validates, and never pays its tenth of a second of imports.)"""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path))):
        error = _most_relevant(error)
        path = tuple(error.absolute_path)
        message = error.message
        schema = error.schema if isinstance(error.schema, dict) else {}
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = schema.get("properties", {})
            patterns = schema.get("patternProperties", {})
            extra = [k for k in error.instance if k not in known and not any(re.search(p, k) for p in patterns)]
            if extra:
                path = (*path, extra[0], "<key>")
        problems.append(RuleProblem(display, doc.line_of(path), rulefield_name(doc, path), message))
    return problems


def _most_relevant(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For `oneOf` over matcher kinds, report the errors of the kind the mapping names."""
    if error.validator != "oneOf" or not error.context:
        return error
    instance = error.instance
    if isinstance(instance, dict):
        context = list(error.context or ())
        nested = [e for e in context if e.validator == "oneOf"]
        if nested:
            return _most_relevant(nested[0])
        branches = error.validator_value if isinstance(error.validator_value, list) else []
        for branch_index, branch in enumerate(branches):
            required = branch.get("required", [])
            if required and required[0] in instance:
                own = [e for e in context if e.relative_schema_path and e.relative_schema_path[0] == branch_index]
                if own:
                    return _most_relevant(own[0])
        kinds = [b["required"][0] for b in branches if b.get("required")]
        if kinds:
            error.message = f"unknown matcher: expected one of {', '.join(kinds)}"
            return error
    if isinstance(instance, list):
        deeper = [e for e in error.context if e.absolute_path and len(e.absolute_path) > len(error.absolute_path)]
        if deeper:
            return _most_relevant(deeper[0])
    from jsonschema.exceptions import best_match

    best = best_match(error.context)
    return _most_relevant(best) if best is not None else error


def rulefield_name(doc: LocatedYaml, path: tuple[str | int, ...]) -> str:
    """`rule CK001 match.call` reads better than `rules[4].match.call`."""
    shown = tuple(p for p in path if p != "<key>")
    if len(shown) >= 2 and shown[0] == "rules" and isinstance(shown[1], int):
        rules = doc.data.get("rules") if isinstance(doc.data, dict) else None
        if isinstance(rules, list) and shown[1] < len(rules) and isinstance(rules[shown[1]], dict):
            rule_id = rules[shown[1]].get("id")
            if isinstance(rule_id, str):
                rest = field_name(shown[2:])
                return f"rule {rule_id}" + (f" {rest}" if rest else "")
    return field_name(shown)


class Problems:
    """Collects problems for one rule with its file and located lines."""

    def __init__(self, doc: LocatedYaml, display: str) -> None:
        self.doc = doc
        self.display = display
        self.items: list[RuleProblem] = []

    def add(self, path: tuple[str | int, ...], message: str) -> None:
        self.items.append(RuleProblem(self.display, self.doc.line_of(path), rulefield_name(self.doc, path), message))

    def regex(self, pattern: str, path: tuple[str | int, ...]) -> re.Pattern[str] | None:
        try:
            return re.compile(pattern)
        except re.error as exc:
            self.add(path, f"invalid regex {pattern!r}: {exc}")
            return None
