"""`tpucheck merge`: shard results (JSON reports) back into one ScanResult.

Each shard analyzed a disjoint share of the files, so findings, errors, skipped files
and coverage add up; the score, plan and inventory are then computed once, over the
union, by the same `build_result` a single scan uses, which is why merged shards give
exactly the single scan's report. One unsharded JSON report merges to itself, which lets
CI scan once and render SARIF, Markdown and annotations from that one JSON.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tpucheck import __version__
from tpucheck.findings import Finding, ScanError, Skipped
from tpucheck.jsontypes import expect_str
from tpucheck.judge.verdict import build_result
from tpucheck.result import SCHEMA_VERSION, Coverage, ScanResult
from tpucheck.ruleset.model import DEFAULT_TARGET, TARGETS, Ruleset

_COUNTS = ("files_found", "files_analyzed", "files_parsed", "files_errored", "files_skipped", "lines_scanned", "product_lines")


class MergeError(Exception):
    """Inputs that do not make one scan: one line, naming the file."""


def read_report(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise MergeError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise MergeError(f"{path}:{exc.lineno}: not a tpucheck JSON report: {exc.msg}") from None
    tool = document.get("tool") if isinstance(document, dict) else None
    if not isinstance(tool, dict) or tool.get("name") != "tpucheck":
        raise MergeError(f"{path}: not a tpucheck JSON report (write one with `tpucheck scan --format json`)")
    if document.get("schema_version") != SCHEMA_VERSION:
        raise MergeError(f"{path}: report schema {document.get('schema_version')!r}, this tpucheck reads {SCHEMA_VERSION}")
    if tool.get("version") != __version__:
        raise MergeError(f"{path}: written by tpucheck {tool.get('version')}, this is {__version__}; scan and merge with the same version")
    rules = document.get("rules")
    if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
        raise MergeError(f"{path}: malformed report (rules must be a list of rule ids)")
    return document


def _shards(documents: list[tuple[Path, dict[str, Any]]]) -> None:
    """All unsharded (one report), or shards 1..N of one N, each exactly once."""
    marks = [(path, doc.get("shard")) for path, doc in documents]
    if all(mark is None for _, mark in marks):
        if len(marks) > 1:
            raise MergeError(f"{marks[1][0]}: several unsharded reports; merge combines the shards of one scan (--shard K/N)")
        return
    seen: dict[int, Path] = {}
    total = None
    for path, mark in marks:
        try:
            k, n = (int(part) for part in str(mark).split("/"))
        except ValueError:
            raise MergeError(f"{path}: not a shard report (no shard K/N)") from None
        if total is not None and n != total:
            raise MergeError(f"{path}: shard {k}/{n} does not belong with shards of {total}")
        total = n
        if k in seen:
            raise MergeError(f"{path}: shard {k}/{n} given twice (also {seen[k]})")
        seen[k] = path
    missing = sorted(set(range(1, (total or 0) + 1)) - set(seen))
    if missing:
        raise MergeError(f"shards {', '.join(f'{k}/{total}' for k in missing)} missing: merge needs every shard")


def _agree(documents: list[tuple[Path, dict[str, Any]]], key: str) -> Any:
    first_path, first = documents[0]
    for path, doc in documents[1:]:
        if doc.get(key) != first.get(key):
            raise MergeError(f"{path}: {key} differs from {first_path}; shards must come from one scan command")
    return first.get(key)


def merge_reports(paths: list[Path], ruleset: Ruleset) -> ScanResult:
    documents = [(path, read_report(path)) for path in paths]
    _shards(documents)
    rule_ids = _agree(documents, "rules")
    root = _agree(documents, "root")
    gate = _agree(documents, "gate")
    known = ruleset.by_id()
    unknown = sorted(set(rule_ids) - set(known))
    if unknown:
        raise MergeError(f"the reports used rules this merge does not know: {', '.join(unknown[:5])}; pass the same --rules / config as the scan")
    target = _agree([(path, doc.get("summary", {})) for path, doc in documents], "target") or DEFAULT_TARGET
    if target not in TARGETS:
        raise MergeError(f"{documents[0][0]}: malformed report (unknown target {target!r})")
    rules = ruleset.with_rules(tuple(known[rule_id] for rule_id in sorted(rule_ids))).for_target(target)
    inventory = {rule.id: rule.inventory for rule in rules.rules}
    active: list[Finding] = []
    suppressed: list[Finding] = []
    errors: list[ScanError] = []
    skipped: list[Skipped] = []
    configuration_errors: list[ScanError] = []
    counts = dict.fromkeys(_COUNTS, 0)
    cuda_files: list[tuple[str, int]] = []
    set_aside: list[Finding] = []
    workloads: set[str] = set()
    for path, doc in documents:
        try:
            set_aside += [_finding(entry, inventory, False) for entry in doc.get("set_aside", [])]
            workloads.update(str(w) for w in doc.get("summary", {}).get("workloads", []))
            active += [_finding(entry, inventory, False) for entry in doc["findings"]]
            suppressed += [_finding(entry, inventory, True) for entry in doc["suppressed"]]
            errors += [ScanError(e["path"], e["kind"], e["message"]) for e in doc["errors"]]
            skipped += [Skipped(s["path"], s["reason"]) for s in doc["skipped"]]
            configuration_errors += [ScanError(e["path"], e["kind"], e["message"]) for e in doc.get("configuration_errors", [])]
            for key in _COUNTS:
                counts[key] += int(doc["coverage"][key])
            cuda_files += [(expect_str(entry["path"], "a cuda_sources path"), int(entry["lines"])) for entry in doc["inventory"].get("cuda_sources", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise MergeError(f"{path}: malformed report ({type(exc).__name__}: {exc})") from None
    result = build_result(
        str(root), rules, active, suppressed, errors, skipped, Coverage(**counts), cuda_files=cuda_files, set_aside=set_aside, workloads=sorted(workloads)
    )
    result.baseline = gate.get("baseline") if isinstance(gate, dict) else None
    result.diff_base = gate.get("diff_base") if isinstance(gate, dict) else None
    result.configuration_errors = sorted(set(configuration_errors), key=lambda e: (e.path, e.kind, e.message))
    traces = [doc["trace"] for _, doc in documents if isinstance(doc.get("trace"), dict)]
    if traces:  # `scan --trace`: the run's summary, its counts taken again from the merged findings
        from tpucheck.trace.overlay import RunEvidence

        try:
            result.trace = RunEvidence.from_dict(traces[0], result.findings)
        except (KeyError, TypeError, ValueError) as exc:
            raise MergeError(f"malformed trace section ({type(exc).__name__}: {exc})") from None
    return result


def _finding(entry: dict[str, Any], inventory: dict[str, str | None], suppressed: bool) -> Finding:
    """The report omits what the rule itself holds (its inventory role); take it from there."""
    finding = Finding.from_dict(entry, suppressed=suppressed)
    return replace(finding, inventory=inventory.get(finding.rule))
