"""scan(): discovery, parallel per-file analysis, then findings, suppressions and score.

Workers are forked with the compiled rules already in memory, files go out largest
first in small batches so two cores stay busy to the end, and results are sorted
before anything is derived from them, so the output never depends on the worker count
or on which worker finished first.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from tpucheck.analyzers import AnalysisContext, analyze_text, build_context
from tpucheck.discovery import DEFAULT_MAX_FILE_SIZE, SourceFile, discover
from tpucheck.findings import (
    FileResult,
    Finding,
    ScanError,
    fingerprints,
    suppression_key,
)
from tpucheck.result import Coverage, ScanResult, build_inventory
from tpucheck.roles import role_of
from tpucheck.ruleset.model import Ruleset
from tpucheck.scoring import compute_score
from tpucheck.sourcetext import SourceTextError, decode

Progress = Callable[[int, int], None]
INLINE_BELOW = 40
"""Fewer files than this are analyzed in-process: a pool costs more than it saves."""


@dataclass(frozen=True, slots=True)
class ScanOptions:
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    jobs: int | None = None
    prefilter: bool = True


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def analyze_file(source: SourceFile, context: AnalysisContext) -> FileResult:
    """Read, decode and analyze one file; every failure becomes an error entry."""
    try:
        with open(source.abspath, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return FileResult(source.path, source.kinds[0], error=ScanError(source.path, "unreadable", f"cannot read: {reason}"))
    try:
        text = decode(data, python="python" in source.kinds)
    except SourceTextError as exc:
        return FileResult(source.path, source.kinds[0], error=ScanError(source.path, exc.kind, str(exc)))
    return analyze_text(source.path, source.kinds, text, context)


_WORKER_CONTEXT: AnalysisContext | None = None


def _init_worker(context: AnalysisContext) -> None:
    global _WORKER_CONTEXT
    _WORKER_CONTEXT = context


def _analyze_batch(batch: list[SourceFile]) -> list[FileResult]:
    assert _WORKER_CONTEXT is not None
    return [analyze_file(source, _WORKER_CONTEXT) for source in batch]


def _batches(files: Sequence[SourceFile], jobs: int) -> list[list[SourceFile]]:
    ordered = sorted(files, key=lambda f: (-f.size, f.path))
    size = max(1, min(64, len(ordered) // (jobs * 8) or 1))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def analyze_files(files: Sequence[SourceFile], context: AnalysisContext, jobs: int, progress: Progress | None = None) -> list[FileResult]:
    results: list[FileResult] = []
    total = len(files)
    if jobs <= 1 or total < INLINE_BELOW:
        for done, source in enumerate(files, start=1):
            results.append(analyze_file(source, context))
            if progress:
                progress(done, total)
        return results
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method), initializer=_init_worker, initargs=(context,))
    with pool:
        futures = [pool.submit(_analyze_batch, batch) for batch in _batches(files, jobs)]
        for future in as_completed(futures):
            results.extend(future.result())
            if progress:
                progress(len(results), total)
    return results


def first_party_packages(files: Sequence[SourceFile]) -> frozenset[str]:
    """The scanned project's own top-level packages: `pkg/__init__.py` or
    `src/pkg/__init__.py` at the root."""
    names = set()
    for source in files:
        parts = source.path.split("/")
        if parts[-1] == "__init__.py" and (len(parts) == 2 or (len(parts) == 3 and parts[0] == "src")):
            names.add(parts[-2])
    return frozenset(names)


def scan(root: str, ruleset: Ruleset, options: ScanOptions = ScanOptions(), progress: Progress | None = None) -> ScanResult:
    context = build_context(ruleset, prefilter=options.prefilter)
    found = discover(
        root,
        exclude=options.exclude,
        respect_gitignore=options.respect_gitignore,
        max_file_size=options.max_file_size,
        extra_globs=context.other_globs,
    )
    context.python.first_party = first_party_packages(found.files)
    jobs = options.jobs or default_jobs()
    results = sorted(analyze_files(found.files, context, jobs, progress), key=lambda r: r.path)
    return assemble(root, ruleset, results, found.skipped, found.errors, files_found=len(found.files) + len(found.skipped) + len(found.errors))


def assemble(root: str, ruleset: Ruleset, results: list[FileResult], skipped: list, discovery_errors: list[ScanError], *, files_found: int) -> ScanResult:
    """FileResults to a ScanResult: pure, so shards and caches can feed it too."""
    rules = ruleset.by_id()
    active: list[Finding] = []
    suppressed: list[Finding] = []
    errors = list(discovery_errors)
    for result in results:
        if result.error is not None:
            errors.append(result.error)
        for finding in _findings(result, rules):
            (suppressed if finding.suppressed else active).append(finding)
    active.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    errors.sort(key=lambda e: (e.path, e.kind, e.message))
    coverage = Coverage(
        files_found=files_found,
        files_analyzed=sum(r.error is None for r in results),
        files_parsed=sum(r.parsed for r in results),
        files_errored=len(errors),
        files_skipped=len(skipped),
        lines_scanned=sum(r.lines for r in results if r.error is None),
    )
    efforts = {r.id: (r.effort_low, r.effort_high, r.effort_per) for r in ruleset.rules}
    fixes = {r.id: r.fix for r in ruleset.rules}
    score = compute_score(active, coverage.lines_scanned, efforts, fixes)
    return ScanResult(
        root=root,
        findings=active,
        suppressed=suppressed,
        errors=errors,
        skipped=sorted(skipped, key=lambda s: s.path),
        coverage=coverage,
        score=score,
        inventory=build_inventory(active),
        rules=sorted(rules),
        rule_data=ruleset.rules,
    )


def _findings(result: FileResult, rules: dict) -> list[Finding]:
    role = role_of(result.path)
    matches = sorted(
        (m for m in result.matches if m.rule_id in rules),
        key=lambda m: (m.cell or 0, m.span.line, m.span.column, m.rule_id),
    )
    prints = fingerprints([(m.rule_id, result.path, m.snippet) for m in matches])
    out = []
    for match, fingerprint in zip(matches, prints):
        rule = rules[match.rule_id]
        suppression = result.suppressions.get(suppression_key(match.span.line, match.cell))
        if suppression is None and match.span.end_line != match.span.line:
            suppression = result.suppressions.get(suppression_key(match.span.end_line, match.cell))
        silenced = suppression is not None and suppression.covers(rule.id, rule.name)
        out.append(
            Finding(
                rule=rule.id,
                name=rule.name,
                category=rule.category,
                severity=match.severity or rule.severity,
                confidence=rule.confidence,
                path=result.path,
                span=match.span,
                cell=match.cell,
                message=rule.message,
                fix=rule.fix,
                affects=rule.affects,
                snippet=match.snippet,
                role=role,
                guarded=match.guarded,
                fingerprint=fingerprint,
                detail=match.detail,
                suppressed=silenced,
                suppression_reason=suppression.reason if silenced and suppression else None,
                inventory=rule.inventory,
                help_uri=rule.help_uri,
            )
        )
    return _drop_superseded(out, rules)


def _inside(inner: Finding, outer: Finding) -> bool:
    return inner.cell == outer.cell and (outer.span.line, outer.span.column) <= (inner.span.line, inner.span.column) and (
        inner.span.end_line,
        inner.span.end_column,
    ) <= (outer.span.end_line, outer.span.end_column)


def _drop_superseded(findings: list[Finding], rules: dict) -> list[Finding]:
    """A finding that a more specific rule's finding already covers is not counted twice."""
    covering = [f for f in findings if rules[f.rule].supersedes]
    if not covering:
        return findings
    return [
        f
        for f in findings
        if not any(f.rule in rules[c.rule].supersedes and _inside(f, c) for c in covering)
    ]
