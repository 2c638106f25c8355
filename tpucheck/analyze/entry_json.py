"""A file's analysis as the result cache stores it: compact JSON lists, and the reading
back that trusts nothing (`analyze/cache.py` explains why: the cache may sit in a hostile
tree). Every field is type-checked; anything not exactly what `result_to_json` writes
raises TypeError or `Malformed`, which the cache turns into a miss."""

from __future__ import annotations

from typing import Any

from tpucheck.findings import Build, FileResult, Import, ImportFacts, JitBuild, RawMatch, Reason, ScanError, Span, Suppression
from tpucheck.jsontypes import expect_bool, expect_int, expect_list, expect_str, optional_str

__all__ = ["Malformed", "result_from_json", "result_to_json"]


def result_to_json(result: FileResult) -> dict[str, Any]:
    """The result without its path and kind: the key already holds them."""
    return {
        "lines": result.lines,
        "parsed": result.parsed,
        "matches": [
            [
                m.rule_id,
                m.span.line,
                m.span.column,
                m.span.end_line,
                m.span.end_column,
                m.snippet,
                m.cell,
                m.guarded,
                m.detail,
                m.severity,
                m.role,
                [[r.rule, r.evidence, r.line, r.cell] for r in m.reasons],
            ]
            for m in result.matches
        ],
        "suppressions": [[line, sorted(s.rules), s.reason] for line, s in sorted(result.suppressions.items())],
        "error": None if result.error is None else [result.error.kind, result.error.message],
        "imports": None if result.imports is None else _facts_to_json(result.imports),
    }


def _facts_to_json(facts: ImportFacts) -> dict[str, Any]:
    return {
        "imports": [[i.level, i.module, i.conditional, i.top, i.guarded, i.branch, i.placeholder, i.cuda_test] for i in facts.imports],
        "builds": [[b.name, list(b.sources), b.package] for b in facts.builds],
        "workloads": list(facts.workloads),
        "options": [[name, default] for name, default in facts.options],
        "jit_builds": [[b.callee, list(b.sources), b.guard, b.line, b.target, b.name, b.opt_in, b.twin] for b in facts.jit_builds],
        "jit_loaders": list(facts.jit_loaders),
        "checks": list(facts.checks),
        "dead": [[i.level, i.module, i.dead] for i in facts.dead],
        "registered": [[name, start, end, list(keys)] for name, start, end, keys in facts.registered],
    }


def _facts_from_json(data: Any) -> ImportFacts | None:
    if data is None:
        return None
    if type(data) is not dict or set(data) != {"imports", "builds", "workloads", "options", "jit_builds", "jit_loaders", "checks", "dead", "registered"}:
        raise Malformed
    imports = []
    for item in expect_list(data["imports"]):
        level, module, conditional, top, guarded, branch, placeholder, cuda_test = expect_list(item, length=8)
        imports.append(
            Import(
                expect_int(level), expect_str(module), expect_bool(conditional), expect_bool(top), expect_bool(guarded), expect_bool(branch), expect_bool(placeholder), expect_bool(cuda_test)
            )
        )
    builds = []
    for item in expect_list(data["builds"]):
        name, sources, package = expect_list(item, length=3)
        builds.append(Build(expect_str(name), tuple(expect_str(s) for s in expect_list(sources)), expect_str(package)))
    options = []
    for item in expect_list(data["options"]):
        name, default = expect_list(item, length=2)
        options.append((expect_str(name), expect_str(default)))
    jit_builds = []
    for item in expect_list(data["jit_builds"]):
        callee, sources, guard, line, target, name, opt_in, twin = expect_list(item, length=8)
        written = (expect_str(callee), tuple(expect_str(s) for s in expect_list(sources)), expect_str(guard), expect_int(line))
        jit_builds.append(JitBuild(*written, expect_str(target), expect_str(name), expect_str(opt_in), expect_str(twin)))
    loaders = tuple(expect_str(name) for name in expect_list(data["jit_loaders"]))
    workloads = tuple(expect_str(w) for w in expect_list(data["workloads"]))
    checks = tuple(expect_str(name) for name in expect_list(data["checks"]))
    dead = []
    for item in expect_list(data["dead"]):
        level, module, evidence = expect_list(item, length=3)
        dead.append(Import(expect_int(level), expect_str(module), False, dead=expect_str(evidence)))
    registered = []
    for item in expect_list(data["registered"]):
        name, start, end, keys = expect_list(item, length=4)
        registered.append((expect_str(name), expect_int(start), expect_int(end), tuple(expect_str(k) for k in expect_list(keys))))
    return ImportFacts(tuple(imports), tuple(builds), workloads, tuple(options), tuple(jit_builds), loaders, checks, tuple(dead), tuple(registered))


class Malformed(Exception):
    """An entry that is not exactly what `result_to_json` writes (a value of the wrong
    type raises TypeError, from `tpucheck.jsontypes`)."""


def result_from_json(path: str, kind: str, data: Any) -> FileResult:
    if type(data) is not dict or set(data) != {"lines", "parsed", "matches", "suppressions", "error", "imports"}:
        raise Malformed
    matches = []
    for item in expect_list(data["matches"]):
        rule_id, line, column, end_line, end_column, snippet, cell, guarded, detail, severity, role, reasons = expect_list(item, length=12)
        matches.append(
            RawMatch(
                rule_id=expect_str(rule_id),
                span=Span(expect_int(line), expect_int(column), expect_int(end_line), expect_int(end_column)),
                snippet=expect_str(snippet),
                cell=None if cell is None else expect_int(cell),
                guarded=expect_bool(guarded),
                detail=optional_str(detail),
                severity=optional_str(severity),
                role=optional_str(role),
                reasons=tuple(_reason(r) for r in expect_list(reasons)),
            )
        )
    suppressions = {}
    for item in expect_list(data["suppressions"]):
        line, rules, reason = expect_list(item, length=3)
        suppressions[expect_int(line)] = Suppression(
            rules=frozenset(expect_str(r) for r in expect_list(rules)), reason=optional_str(reason)
        )
    error = None
    if data["error"] is not None:
        error_kind, message = expect_list(data["error"], length=2)
        error = ScanError(path, expect_str(error_kind), expect_str(message))
    return FileResult(
        path=path,
        kind=kind,
        lines=expect_int(data["lines"]),
        parsed=expect_bool(data["parsed"]),
        matches=matches,
        suppressions=suppressions,
        error=error,
        imports=_facts_from_json(data["imports"]),
    )


def _reason(item: Any) -> Reason:
    rule, evidence, line, cell = expect_list(item, length=4)
    return Reason(
        expect_str(rule), expect_str(evidence), None if line is None else expect_int(line), None if cell is None else expect_int(cell)
    )
