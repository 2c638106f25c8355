"""CUDA values in config files (`device: cuda`, `backend: nccl`) -> the values a rule
names, edited as text so that nothing but the value changes.

A rule opts in with `values` in its codemod: `codemod: {name: config-value, safe: ...,
values: {cuda: tpu}}` for a rule of config files alone, or `values` beside a Python codemod
(`{name: default-backend, safe: false, values: {nccl: tpu}}`) for a rule that matches both:
its config-file findings go here. The finding's span is the matched text on one line
(`device: cuda` or just `cuda`, as the file and config matchers give it); the value is
what follows the last `:` or `=` in it (or the whole span), quotes kept. A value equal to a
key of `values`, or starting with the key and a colon (`cuda:0`), has that key replaced.
The file is never parsed and re-dumped: every other byte, comments and layout included,
stays as it was.
"""

from __future__ import annotations

import re

from tpucheck.fix.base import FIXED, MANUAL, UNSAFE, Outcome, Target

__all__ = ["CODEMOD", "CONFIG_SUFFIXES", "fix_config"]

CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini")
CODEMOD = "config-value"
_VALUE = re.compile(r"""(?P<quote>["']?)(?P<value>[^"'\s,#]+)(?P=quote)\s*,?\s*$""")


def fix_config(text: str, targets: list[Target], unsafe: bool, values: dict[str, dict[str, str]] | None = None) -> tuple[str, list[Outcome]]:
    """`text` with the values of `targets` replaced; `values` maps a rule id to its
    `{old: new}` table (from the rule's codemod)."""
    lines = text.splitlines(keepends=True)
    outcomes: list[Outcome] = []
    for target in sorted(targets, key=lambda t: t.start, reverse=True):
        table = (values or {}).get(target.finding.rule)
        if not table:
            outcomes.append(Outcome(target, MANUAL, "only Python files and notebooks are fixed for this rule; fix it by hand"))
            continue
        (line, column), (end_line, end_column) = target.start, target.end
        if line != end_line or not 1 <= line <= len(lines):
            outcomes.append(Outcome(target, MANUAL, "the value spans lines; fix it by hand"))
            continue
        current = lines[line - 1]
        span = current[column:end_column]
        separator = max(span.rfind(":", 0, _value_start(span)), span.rfind("=", 0, _value_start(span)))
        offset = column + (separator + 1 if separator >= 0 else 0)
        found = _VALUE.search(current[offset:end_column])
        new_value = _replacement(found.group("value"), table) if found else None
        if found is None or new_value is None:
            outcomes.append(Outcome(target, MANUAL, "not a plain value this fix knows; fix it by hand"))
            continue
        start, end = offset + found.start("value"), offset + found.end("value")
        note = f"{found.group('value')} -> {new_value}"
        if not (target.safe or unsafe):
            outcomes.append(Outcome(target, UNSAFE, f"unsafe: {target.finding.rule}'s fix may change behaviour (would be: {note})"))
            continue
        lines[line - 1] = current[:start] + new_value + current[end:]
        outcomes.append(Outcome(target, FIXED, note))
    return "".join(lines), sorted(outcomes, key=lambda o: o.target.start)


def _value_start(span: str) -> int:
    """Where the value may start: a `cuda:0` value has a colon of its own, so the separator
    is the first `: ` / `=` / `":` outside the value."""
    for pattern in (": ", ":\t", "=", '":', "':"):
        at = span.find(pattern)
        if at >= 0:
            return at + 1
    return len(span)


def _replacement(value: str, table: dict[str, str]) -> str | None:
    for old, new in table.items():
        if value == old:
            return new
        if value.startswith(old + ":"):
            return new + value[len(old) :]
    return None
