"""`tpucheck scan --trace trace.json`: what the run saw, laid over a static scan.

A static finding whose line the run reached with the thing it warns about (an op on the
device for an unsupported-op rule, a host sync or graph break for host-sync, a data-dependent
shape for dynamic-shape) is marked confirmed: "[confirmed at run time]" leads its message,
`evidence: confirmed` is in the JSON, and it takes the run's severity when that is higher
(the run was judged against the target's own dispatcher table). A trace finding no static
finding covers is added, "[from the run]", `evidence: runtime`, and scored like a static
finding of its severity; a confirmed one is not counted twice. Trace findings outside the
scanned tree, or with no user line (the optimizer's step), are only counted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tpucheck.findings import Finding, Span, fingerprints, normalize_snippet, severity_rank
from tpucheck.ruleset.model import Ruleset
from tpucheck.trace.judge import TraceFinding, judge
from tpucheck.trace.opstatus import OpTable, load_op_table
from tpucheck.trace.report import summary

CONFIRMED, RUNTIME = "confirmed", "runtime"
LABELS = {CONFIRMED: "[confirmed at run time]", RUNTIME: "[from the run]"}
WATCHED = {"unsupported-op": ("op",), "host-sync": ("host-sync", "graph-break"), "dynamic-shape": ("dynamic-shape", "graph-break")}
"""A static finding's category -> what the run must have seen at its line to confirm it."""


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """The trace a scan took, in the scan's report."""

    file: str
    model: str
    route: str
    traced_target: str
    phases: dict[str, dict[str, Any]]
    confirmed: int
    added: int
    elsewhere: int
    unseen_ops: tuple[str, ...] = field(default_factory=tuple)
    """Ops behind the added findings: what static analysis could not see."""

    def sentence(self) -> str:
        per_phase = "; ".join(f"{p}: {c['ops']} ops, {c['unsupported']} not run by the target" for p, c in self.phases.items())
        return (
            f"run-time confirmation from {self.file} ({self.model}, {self.route}): {self.confirmed} static finding{'' if self.confirmed == 1 else 's'} confirmed, "
            f"{self.added} found only by the run, {self.elsewhere} outside the scanned tree or without a user line ({per_phase})"
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], findings: list[Finding]) -> RunEvidence:
        """From a JSON report's `trace` section (`tpucheck merge`), the confirmed and added
        counts taken from the findings themselves (shards each saw their own files)."""
        return cls(
            file=str(data["file"]), model=str(data["model"]), route=str(data["route"]), traced_target=str(data["traced_target"]),
            phases={str(k): dict(v) for k, v in data["phases"].items()},
            confirmed=sum(f.evidence == CONFIRMED for f in findings), added=sum(f.evidence == RUNTIME for f in findings),
            elsewhere=int(data["elsewhere"]), unseen_ops=tuple(str(op) for op in data.get("unseen_ops", ())),
        )  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file, "model": self.model, "route": self.route, "traced_target": self.traced_target,
            "phases": self.phases, "confirmed": self.confirmed, "added": self.added, "elsewhere": self.elsewhere,
            "unseen_ops": list(self.unseen_ops),
        }  # fmt: skip


def _seen_at(trace: Mapping[str, Any], scan_root: str) -> dict[tuple[str, int], set[str]]:
    """(scan-relative path, line) -> what the run saw there: "op", event kinds."""
    trace_root = str(trace["root"])
    seen: dict[tuple[str, int], set[str]] = {}
    for observed in trace["phases"].values():
        places = [(site["path"], site["line"], "op") for op in observed["ops"] for site in op["sites"]]
        places += [(event.get("path"), event.get("line"), event["kind"]) for event in observed["events"]]
        for path, line, what in places:
            where = _in_scan(path, trace_root, scan_root)
            if where is not None and line:
                seen.setdefault((where, int(line)), set()).add(what)
    return seen


def _in_scan(path: str | None, trace_root: str, scan_root: str) -> str | None:
    if not path:
        return None
    absolute = os.path.abspath(path if os.path.isabs(path) else os.path.join(trace_root, path))
    root = os.path.abspath(scan_root)
    try:
        if os.path.commonpath([absolute, root]) != root:
            return None
    except ValueError:
        return None
    return os.path.relpath(absolute, root).replace(os.sep, "/")


def _merged(findings: list[TraceFinding]) -> list[tuple[TraceFinding, tuple[str, ...], int]]:
    """One per (rule, op, path, line): the phases it happened in and the calls in all."""
    merged: dict[tuple[str, str | None, str | None, int | None], tuple[TraceFinding, list[str], int]] = {}
    for finding in findings:
        key = (finding.rule, finding.op, finding.path, finding.line)
        first, phases, count = merged.get(key, (finding, [], 0))
        merged[key] = (first, [*phases, finding.phase] if finding.phase not in phases else phases, count + finding.count)
    return [(first, tuple(phases), count) for first, phases, count in merged.values()]


def _line_text(scan_root: str, path: str, line: int) -> str:
    try:
        with open(os.path.join(scan_root, path), encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.rstrip("\n")
    except OSError:
        pass
    return ""


def apply_trace(
    findings: list[Finding],
    ruleset: Ruleset,
    trace: Mapping[str, Any],
    scan_root: str,
    file: str,
    role_of: Callable[[str], str],
    table: OpTable | None = None,
) -> tuple[list[Finding], RunEvidence]:
    """The scan's findings with the run's evidence laid over them (see the module doc);
    `role_of` is the judgement's role of a path, for the findings only the run saw."""
    table = table or load_op_table()
    rules = ruleset.by_id()
    seen = _seen_at(trace, scan_root)
    trace_findings = judge(trace["phases"], ruleset.target, ruleset, table)
    out = list(findings)
    confirmed: set[int] = set()
    added_raw: list[tuple[TraceFinding, tuple[str, ...], str]] = []
    elsewhere = 0
    for index, finding in enumerate(out):
        watched = WATCHED.get(finding.category, ())
        if any(what in watched for line in range(finding.span.line, finding.span.end_line + 1) for what in seen.get((finding.path, line), ())):
            confirmed.add(index)
    for trace_finding, phases, _count in _merged(trace_findings):
        where = _in_scan(trace_finding.path, str(trace["root"]), scan_root)
        if where is None or trace_finding.line is None:
            elsewhere += 1
            continue
        match = next(
            (i for i, f in enumerate(out) if f.path == where and f.span.line <= trace_finding.line <= f.span.end_line and f.category in _compatible(trace_finding.category)),
            None,
        )
        if match is not None:
            confirmed.add(match)
            if severity_rank(trace_finding.severity) < severity_rank(out[match].severity):
                out[match] = replace(out[match], severity=trace_finding.severity)
            continue
        added_raw.append((trace_finding, phases, where))
    for index in confirmed:
        finding = out[index]
        out[index] = replace(finding, evidence=CONFIRMED, message=f"{LABELS[CONFIRMED]} {finding.message}")
    added = _as_findings(added_raw, rules, scan_root, role_of)
    return out + added, RunEvidence(
        file=file,
        model=str(trace["request"].get("model", "")),
        route=str(trace["environment"].get("route", "")),
        traced_target=str(trace["target"]),
        phases=summary(trace),
        confirmed=len(confirmed),
        added=len(added),
        elsewhere=elsewhere,
        unseen_ops=tuple(sorted({t.op for t, _, _ in added_raw if t.op})),
    )


def _compatible(category: str) -> tuple[str, ...]:
    return {"unsupported-op": ("unsupported-op",), "host-sync": ("host-sync", "dynamic-shape"), "dynamic-shape": ("dynamic-shape",)}.get(category, (category,))


def _as_findings(raw: list[tuple[TraceFinding, tuple[str, ...], str]], rules: Mapping[str, Any], scan_root: str, role_of: Callable[[str], str]) -> list[Finding]:
    raw = sorted(raw, key=lambda item: (item[2], item[0].line or 0, item[0].rule, item[0].op or ""))
    texts = [_line_text(scan_root, where, t.line or 1) for t, _, where in raw]
    snippets = [normalize_snippet(text) or (t.op or t.rule) for (t, _, _), text in zip(raw, texts)]
    prints = fingerprints([(t.rule, where, snippet) for (t, _, where), snippet in zip(raw, snippets)])
    out = []
    for (t, phases, where), text, snippet, fingerprint in zip(raw, texts, snippets, prints):
        rule = rules[t.rule]
        line = t.line or 1
        out.append(
            Finding(
                rule=t.rule, name=t.name, category=t.category, severity=t.severity, confidence=rule.confidence, path=where,
                span=Span(line, 1, line, max(1, len(text)) + 1 if text else 1), cell=None,
                message=f"{LABELS[RUNTIME]} {t.message}", fix=rule.fix, affects=phases, snippet=snippet, role=role_of(where),
                guarded=False, fingerprint=fingerprint, help_uri=rule.help_uri, evidence=RUNTIME,
            )
        )  # fmt: skip
    return out
