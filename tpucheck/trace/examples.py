"""Run the runtime rules' examples: each a small model, traced for real in the child, that
must (flag) or must not (pass) produce its rule's finding, on the line marked `# expect`.

All examples of a ruleset are traced in one child, once per process: torch's import is
most of a child's start-up. An example is judged for both targets, since RT002 (a CPU
fallback) only exists on PyTorch/XLA and RT001 only on TorchTPU.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from tpucheck.ruleset.model import Rule, Ruleset
from tpucheck.trace.judge import judge
from tpucheck.trace.opstatus import load_op_table

_EXPECT = re.compile(r"#\s*expect\s*$")


def module_name(rule: Rule, expect: str, number: int) -> str:
    return f"example_{rule.id.lower()}_{expect}_{number}"


_TRACED: dict[int, tuple[Ruleset, dict[str, set[tuple[str, int | None]] | str]]] = {}


def _traced(ruleset: Ruleset) -> dict[str, set[tuple[str, int | None]] | str]:
    """Module name -> the (rule, line) of every finding in it on either target, or why the
    example could not be traced; traced once per ruleset object."""
    cached = _TRACED.get(id(ruleset))
    if cached is None or cached[0] is not ruleset:
        cached = (ruleset, _trace_examples(ruleset))
        _TRACED[id(ruleset)] = cached
    return cached[1]


def _trace_examples(ruleset: Ruleset) -> dict[str, set[tuple[str, int | None]] | str]:
    from tpucheck.trace.command import TraceFailed, run_traces
    from tpucheck.trace.request import TraceRequest

    cases = []
    with tempfile.TemporaryDirectory(prefix="tpucheck-examples-") as root:
        for rule in ruleset.rules:
            if "runtime" not in rule.kinds():
                continue
            for expect, examples in (("flag", rule.flag_examples), ("pass", rule.pass_examples)):
                for number, example in enumerate(examples, start=1):
                    name = module_name(rule, expect, number)
                    Path(root, f"{name}.py").write_text(example.code, encoding="utf-8")
                    loss = f"{name}:loss" if re.search(r"^def loss\(", example.code, re.M) else None
                    cases.append((name, TraceRequest(f"{name}:model", f"{name}:inputs", loss=loss)))
        table = load_op_table()
        outcomes = run_traces([request for _, request in cases], target="torchtpu", root=root, ruleset=ruleset, allow_exec=True, table=table)
    out: dict[str, set[tuple[str, int | None]] | str] = {}
    for (name, _), outcome in zip(cases, outcomes):
        if isinstance(outcome, TraceFailed):
            out[name] = str(outcome)
            continue
        seen: set[tuple[str, int | None]] = set()
        for target in ("torchtpu", "xla"):
            for finding in judge(outcome.report["phases"], target, ruleset.for_target(target), table):
                if finding.path == f"{name}.py":
                    seen.add((finding.rule, finding.line))
        out[name] = seen
    return out


def runtime_example_problem(ruleset: Ruleset, rule: Rule, code: str, expect: str, number: int) -> str | None:
    """None when the example behaved; else what went wrong, in one line."""
    result = _traced(ruleset).get(module_name(rule, expect, number))
    if result is None:
        return "example was not traced"
    if isinstance(result, str):
        return f"example does not run: {result}"
    lines = {line for rule_id, line in result if rule_id == rule.id}
    if expect == "pass":
        return f"flagged on line {', '.join(str(line) for line in sorted(x or 0 for x in lines))}" if lines else None
    if not lines:
        return "not flagged"
    wanted = {n for n, text in enumerate(code.splitlines(), start=1) if _EXPECT.search(text)}
    missed = sorted(wanted - lines)
    return f"not flagged on line {', '.join(map(str, missed))} marked `# expect`" if missed else None
