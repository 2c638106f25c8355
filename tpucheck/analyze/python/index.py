"""The Python-facing view of a ruleset: lookup tables built once per process.

The walker asks "which matchers care about this qualified name / method / keyword?"
millions of times; these tables answer with a cached dict lookup, so the cost of a
scan does not grow with the number of rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import translate

from tpucheck.ruleset.judgement import Guards
from tpucheck.ruleset.model import DeviceContext, Matcher, Rule, Ruleset
from tpucheck.ruleset.names import GlobTable

RuleMatcher = tuple[Rule, Matcher]


@dataclass(slots=True)
class PythonIndex:
    call: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    reference: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    decorator: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    imports: GlobTable[RuleMatcher] = field(default_factory=lambda: GlobTable(prefixes=True))
    method: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    attribute: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    keyword: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    define: GlobTable[RuleMatcher] = field(default_factory=GlobTable)
    """Function names: a `*_ref` definition is a PyTorch reference path of a kernel."""
    strings: list[RuleMatcher] = field(default_factory=list)
    device: DeviceContext = field(default_factory=DeviceContext)
    needles: tuple[tuple[str, ...], ...] = ()
    first_party: frozenset[str] = frozenset()
    """Top-level packages of the scanned project: its own imports are not dependencies
    (DeepSpeed importing `deepspeed` is not a DeepSpeed dependency)."""
    guards: Guards = field(default_factory=Guards)
    function_roles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    other_accelerator_apis: tuple[str, ...] = ()
    other_accelerator_calls: re.Pattern[str] | None = None
    """rules/judgement.yaml `other_accelerators.tests` as one pattern over qualified names:
    conditions ask it of every call they test."""
    other_accelerator_attrs: frozenset[str] = frozenset()
    """The attributes of its `*.is_mps` globs: `x.is_mps` on a local has no qualified name."""
    other_devices: frozenset[str] = frozenset()
    host_results: frozenset[str] = frozenset()
    host_modules: frozenset[str] = frozenset()
    host_annotations: frozenset[str] = frozenset()
    host_constructors: frozenset[str] = frozenset()
    host_calls: frozenset[str] = frozenset()
    host_keeps: frozenset[str] = frozenset()
    host_categories: frozenset[str] = frozenset()
    dim_first: frozenset[str] = frozenset()
    host_values: frozenset[str] = frozenset()

    @property
    def any_rules(self) -> bool:
        return bool(self.needles)

    def candidate(self, text: str) -> bool:
        """The prefilter: could any rule match this source at all?"""
        present: dict[str, bool] = {}
        for group in self.needles:
            for needle in group:
                found = present.get(needle)
                if found is None:
                    found = present[needle] = needle in text
                if not found:
                    break
            else:
                return True
        return False


def build_python_index(ruleset: Ruleset) -> PythonIndex:
    judgement = ruleset.judgement
    tests = judgement.other_accelerator_tests
    index = PythonIndex(device=ruleset.device, guards=judgement.guards, function_roles=judgement.function_roles,
        other_accelerator_apis=judgement.other_accelerator_apis,
        other_accelerator_calls=re.compile("|".join(map(translate, tests))) if tests else None,
        other_accelerator_attrs=frozenset(p[2:] for p in tests if p.startswith("*.") and "*" not in p[2:]),
        other_devices=judgement.other_devices,
        host_results=ruleset.host.results,
        host_modules=ruleset.host.modules,
        host_annotations=ruleset.host.annotations,
        host_constructors=ruleset.host.constructors,
        host_calls=ruleset.host.calls,
        host_keeps=ruleset.host.keeps,
        host_categories=ruleset.host.categories,
        dim_first=ruleset.host.dim_first,
        host_values=ruleset.host.values,
    )
    tables = {
        "call": index.call,
        "reference": index.reference,
        "decorator": index.decorator,
        "import": index.imports,
        "method": index.method,
        "attribute": index.attribute,
        "keyword": index.keyword,
        "define": index.define,
    }
    needles: dict[tuple[str, ...], None] = {}
    for rule in ruleset.rules:
        python = False
        for matcher in rule.matchers:
            table = tables.get(matcher.kind)
            if table is not None:
                python = True
                for pattern in matcher.patterns:
                    table.add(pattern, (rule, matcher))
            elif matcher.kind == "string":
                python = True
                index.strings.append((rule, matcher))
        if python:
            needles.update(dict.fromkeys(rule.needles))
    index.needles = tuple(needles)
    return index
