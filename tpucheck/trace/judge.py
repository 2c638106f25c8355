"""Judge what a run saw against the target's operator table: trace findings, each with the
rule that names it, the phase it happened in and the user's line that reached it.

Works on the report's own observations (paths already relative to the traced root), so a
trace recorded for one target can be judged again for another (`scan --trace`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tpucheck.ruleset.model import Rule, Ruleset
from tpucheck.trace.opstatus import OpTable

EVENT_RULES: dict[str, str] = {
    "op-missing": "RT001",
    "cpu-fallback": "RT002",
    "host-sync": "RT003",
    "dynamic-shape": "RT004",
    "graph-break": "RT005",
    "op-unknown": "RT006",
}
"""What the run saw -> the rule of runtime.yaml whose `runtime` matcher names it."""

SYNC_OPS = frozenset({"aten::_local_scalar_dense"})
"""Reported as host syncs (RT003), not also as the CPU fallback PyTorch/XLA makes of them."""


@dataclass(frozen=True, slots=True)
class TraceFinding:
    rule: str
    name: str
    category: str
    severity: str
    phase: str
    stage: str
    op: str | None
    path: str | None
    """Relative to the traced root, or absolute outside it; None: no user frame (the
    optimizer's step, the default loss)."""
    line: int | None
    count: int
    message: str

    def sort_key(self) -> tuple[object, ...]:
        return (self.phase, self.path or "~", self.line or 0, self.rule, self.op or "", self.stage)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "name": self.name, "category": self.category, "severity": self.severity,
            "phase": self.phase, "stage": self.stage, "op": self.op, "path": self.path, "line": self.line,
            "count": self.count, "message": self.message,
        }  # fmt: skip


def runtime_rules(ruleset: Ruleset) -> dict[str, Rule]:
    """Event kind -> its rule, among the rules of `ruleset` (already judged for a target);
    a rule left out by --select/--ignore leaves its events unreported."""
    by_event: dict[str, Rule] = {}
    for rule in ruleset.rules:
        for matcher in rule.matchers:
            if matcher.kind == "runtime":
                for event in matcher.patterns:
                    by_event.setdefault(event, rule)
    return by_event


def op_event(op: str, status: str, target: str) -> str | None:
    if op in SYNC_OPS:
        return None
    if status == "missing" and target == "torchtpu":
        return "op-missing"
    if status == "cpu-fallback" or (status == "missing" and target == "xla"):
        return "cpu-fallback"
    if status == "unknown" and not op.startswith("aten::"):
        return "op-unknown"
    return None


def _calls(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'}"


def _where(stage: str) -> str:
    return {"backward": "in the backward pass of this line", "optimizer": "in the optimizer's step", "loss": "in the loss"}.get(stage, "in the forward pass")


def _op_message(event: str, op: str, how: str, target: str, phase: str, stages: list[str], count: int) -> str:
    where = " and ".join(dict.fromkeys(_where(s) for s in stages))
    how = f" ({how})" if how else ""
    if event == "op-missing":
        return f"`{op}` has no TorchTPU kernel{how}: the {phase} step raises here, {where} ({_calls(count)})"
    if event == "cpu-fallback":
        return f"`{op}` runs on the CPU under PyTorch/XLA{how}: a host round trip {where}, {_calls(count)} per {phase} step"
    return f"`{op}` is not in the {target} table{how}, {where} of the {phase} step ({_calls(count)})"


def judge(phases: Mapping[str, Mapping[str, Any]], target: str, ruleset: Ruleset, table: OpTable) -> list[TraceFinding]:
    """Trace findings from a report's `phases` for `target`, sorted."""
    rules = runtime_rules(ruleset)
    out: list[TraceFinding] = []

    def add(event: str, phase: str, stage: str, op: str | None, path: str | None, line: int | None, count: int, message: str) -> None:
        rule = rules.get(event)
        if rule is not None:
            out.append(TraceFinding(rule.id, rule.name, rule.category, rule.severity, phase, stage, op, path, line, count, message))

    for phase, observed in phases.items():
        own_gradient = {
            (site["path"], site["line"])
            for entry in observed.get("ops", ())
            if table.status(entry["op"], target).autograd
            for site in entry.get("sites", ())
            if site["stage"] != "backward"
        }
        for entry in observed.get("ops", ()):
            op = entry["op"]
            status = table.status(op, target)
            event = op_event(op, status.status, target)
            if event is None:
                continue
            # PyTorch's backward of an op the target differentiates itself never reaches it
            entry = {**entry, "sites": [s for s in entry.get("sites", ()) if s["stage"] != "backward" or (s["path"], s["line"]) not in own_gradient]}
            how = "; ".join(part for part in ("via " + " -> ".join(status.via) if status.via else "", status.note or "") if part)
            for (path, line), stages, count in _by_line(entry):
                add(event, phase, stages[0], op, path, line, count, _op_message(event, op, how, target, phase, stages, count))
        for item in observed.get("events", ()):
            kind = item["kind"]
            count = int(item.get("count", 1))
            if kind == "host-sync":
                subject = f"`{item['op']}`" if item.get("op") else "a Python branch on a tensor"
                message = f"host sync in the {phase} step, {_where(item['stage'])}: {subject} {item['detail']} ({_calls(count)})"
            elif kind == "dynamic-shape":
                message = f"`{item['op']}` in the {phase} step, {_where(item['stage'])}: {item['detail']} ({_calls(count)})"
            elif kind == "graph-break":
                message = f"graph break in the {phase} step: {item['detail']}"
            else:
                continue
            add(kind, phase, item["stage"], item.get("op"), item.get("path"), item.get("line"), count, message)
    return sorted(out, key=TraceFinding.sort_key)


def _by_line(entry: Mapping[str, Any]) -> Iterable[tuple[tuple[str | None, int | None], list[str], int]]:
    """(path, line), the stages there and the calls: one finding per user line that reached
    the op, plus one without a place for the calls no user frame made."""
    lines: dict[tuple[str | None, int | None], tuple[list[str], int]] = {}
    for site in entry.get("sites", ()):
        key = (site["path"], site["line"])
        stages, count = lines.get(key, ([], 0))
        lines[key] = ([*stages, site["stage"]] if site["stage"] not in stages else stages, count + int(site["calls"]))
    for stage, count in sorted(entry.get("unattributed", {}).items()):
        stages, before = lines.get((None, None), ([], 0))
        lines[(None, None)] = ([*stages, stage], before + int(count))
    for key, (stages, count) in lines.items():
        yield key, stages, count
