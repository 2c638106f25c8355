"""Where a match sits, and so what it weighs: the role of its code, whether it keeps a
fallback, the severity that place allows, and the findings a more specific one covers.

The one place that turns an analyzer's raw matches into findings: the engine calls
`place` once per file result.
"""

from __future__ import annotations

from tpucheck.analyze.reachability import Reachability, other_backend
from tpucheck.findings import FileResult, Finding, fingerprints, suppression_key
from tpucheck.judge.roles import data_pipeline, role_of
from tpucheck.judge.score import placed_severity

__all__ = ["place"]


def _role(found: str | None, file_role: str, path: str) -> str:
    """Supporting code found inside a product file (a `__main__` block, a benchmark or
    test function) takes its own role; a file already supporting keeps its path's role.
    The `__main__` block of an entry-point script (`train.py` at the root, a file under
    `scripts/`) is the product's way in, not an example of it."""
    if found == "example" and (file_role == "script" or "/" not in path):
        return file_role
    return found if found is not None and file_role in ("library", "script") else file_role


def place(result: FileResult, rules: dict, reach: Reachability | None = None, host_categories: frozenset[str] = frozenset()) -> list[Finding]:
    role = role_of(result.path)
    # What a host-data value makes moot (rules/contexts.yaml `host.categories`) is moot in
    # a dataset's code as a whole: it runs in the loader's workers, on the CPU.
    host_only = data_pipeline(result.path)
    # Another accelerator's code (an XPU shim that sets `torch.cuda.X = torch.xpu.X`)
    # runs only on that device: its kernels are an alternative, kept; the rest is no work.
    elsewhere = other_backend(result.path)
    optional_file = reach is not None and reach.optional(result.path)
    matches = sorted(
        (m for m in result.matches if m.rule_id in rules),
        key=lambda m: (m.cell or 0, m.span.line, m.span.column, m.rule_id),
    )
    prints = fingerprints([(m.rule_id, result.path, m.snippet) for m in matches])
    out = []
    for match, fingerprint in zip(matches, prints, strict=True):
        rule = rules[match.rule_id]
        if (host_only and rule.category in host_categories) or (elsewhere and rule.inventory != "kernel"):
            continue
        # Kernels, and all of an optional extension's CUDA source: DESIGN.md's blocker is
        # a kernel "on the main path"; other code in a lazily imported Python module (often
        # lazy only to break an import cycle) keeps its own guards' verdict.
        guarded = match.guarded or (
            (optional_file and (rule.inventory == "kernel" or result.kind == "native"))
            or (rule.inventory == "kernel" and reach is not None and _optional_extension(match.detail, reach))
        )
        suppression = result.suppressions.get(suppression_key(match.span.line, match.cell))
        if suppression is None and match.span.end_line != match.span.line:
            suppression = result.suppressions.get(suppression_key(match.span.end_line, match.cell))
        silenced = suppression is not None and suppression.covers(rule.id, rule.name)
        reason = suppression.reason if silenced and suppression else None
        place = _role(match.role, role, result.path)
        severity = placed_severity(match.severity or rule.severity, place, guarded)
        if severity == "info" and place == "test":
            continue  # a performance note about a test's own speed is no migration work
        out.append(
            Finding(
                rule=rule.id,
                name=rule.name,
                category=rule.category,
                severity=severity,
                confidence=rule.confidence,
                path=result.path,
                span=match.span,
                cell=match.cell,
                message=rule.message,
                fix=rule.fix,
                affects=rule.affects,
                snippet=match.snippet,
                role=place,
                guarded=guarded,
                fingerprint=fingerprint,
                detail=match.detail,
                suppressed=silenced,
                suppression_reason=reason,
                inventory=rule.inventory,
                help_uri=rule.help_uri,
            )
        )
    return _drop_superseded(out, rules)


def _optional_extension(detail: str | None, reach: Reachability) -> bool:
    """The build of a compiled extension (its name in `detail`) that the code only ever
    imports optionally is fallback kept as its sources are."""
    return detail is not None and detail.rpartition(".")[2] in reach.optional_extensions


def _inside(inner: Finding, outer: Finding) -> bool:
    return inner.cell == outer.cell and (outer.span.line, outer.span.column) <= (inner.span.line, inner.span.column) and (
        inner.span.end_line,
        inner.span.end_column,
    ) <= (outer.span.end_line, outer.span.end_column)


def _drop_superseded(findings: list[Finding], rules: dict) -> list[Finding]:
    """A finding that a more specific rule's finding already covers is not counted twice,
    nor one of its own rule that is the receiver of another on the same line
    (`torch.cuda.current_stream().wait_stream(s)` is one stream edit, not two)."""
    findings = _drop_nested_repeats(findings)
    covering = [f for f in findings if rules[f.rule].supersedes]
    if not covering:
        return findings
    return [
        f
        for f in findings
        if not any(f.rule in rules[c.rule].supersedes and _inside(f, c) for c in covering)
    ]


def _drop_nested_repeats(findings: list[Finding]) -> list[Finding]:
    by_place: dict[tuple[str, int | None, int], list[Finding]] = {}
    for finding in findings:
        by_place.setdefault((finding.rule, finding.cell, finding.span.line), []).append(finding)
    if all(len(group) == 1 for group in by_place.values()):
        return findings
    dropped: set[int] = set()
    for group in by_place.values():
        for a in group:
            for b in group:
                if a is not b and a.snippet != b.snippet and (b.snippet.startswith(a.snippet) or a.snippet.startswith(b.snippet)):
                    # one is the receiver of the other (`cuda.current_stream().wait_stream(s)`);
                    # keep the one that starts first: it names the CUDA call itself. A call in
                    # another's arguments (`set_device(device_count())`) is a second edit.
                    later = max(a, b, key=lambda f: (f.span.column, -len(f.snippet), f.span.end_column, f.fingerprint))
                    dropped.add(id(later))
    return [f for f in findings if id(f) not in dropped]
