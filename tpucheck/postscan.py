"""After the analysis: what the user asked to be set aside, then the result.

`finish` is the one place that applies, in this order, inline suppressions, per-file
ignores, the baseline (recording it first when asked) and the diff, and then scores:
a library caller of `tpucheck.scan` and the CLI get the same result because both end here,
and `tpucheck merge` scores shards with the same `build_result`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pathspec

from tpucheck.baseline import BaselineError, apply_baseline, load_baseline, write_baseline
from tpucheck.findings import Finding, ScanError, Skipped
from tpucheck.gitdiff import DiffError, apply_diff, changed_lines
from tpucheck.result import Coverage, ScanResult, build_inventory
from tpucheck.ruleset.model import Ruleset
from tpucheck.ruleset.select import rule_selected
from tpucheck.scoring import compute_score, without_stray_references
from tpucheck.settings import Settings, SettingsError

__all__ = ["Assembled", "build_result", "finish"]


@dataclass(slots=True)
class Assembled:
    """Every finding of a scan, inline-suppressed ones marked but not yet set aside."""

    root: str
    ruleset: Ruleset
    findings: list[Finding]
    errors: list[ScanError]
    skipped: list[Skipped]
    coverage: Coverage
    shard: tuple[int, int] | None = None
    cuda_files: Sequence[tuple[str, int]] = ()
    problems: list[ScanError] = field(default_factory=list)
    """Configuration problems found before the scan, reported with the result."""


def finish(assembled: Assembled, settings: Settings) -> ScanResult:
    """Suppressions, per-file ignores, baseline, diff; then the scored result."""
    active: list[Finding] = []
    suppressed: list[Finding] = []
    for finding in assembled.findings:  # 1. `# tpucheck: ignore[...]` comments
        (suppressed if finding.suppressed else active).append(finding)
    ignored_for = _per_file_ignores(assembled.ruleset, settings.per_file_ignores)
    if ignored_for is not None:  # 2. per-file-ignores
        kept = []
        for finding in active:
            pattern = ignored_for(finding.path)(finding.rule)
            if pattern is None:
                kept.append(finding)
            else:
                suppressed.append(replace(finding, suppressed=True, suppression_reason=f"per-file-ignores: {pattern}"))
        active = kept
    evidence = None
    if settings.trace is not None:  # what a run of the model saw (`tpucheck trace`), checked by the caller
        from tpucheck.trace.overlay import apply_trace
        from tpucheck.trace.report import load_report

        active, evidence = apply_trace(active, assembled.ruleset, load_report(settings.trace), assembled.root, str(settings.trace))
    result = build_result(
        assembled.root, assembled.ruleset, active, suppressed, assembled.errors, assembled.skipped,
        assembled.coverage, shard=assembled.shard, cuda_files=assembled.cuda_files,
    )  # fmt: skip
    result.trace = evidence
    problems = [*settings.problems, *assembled.problems]
    if settings.write_baseline is not None:  # 3. the baseline, recorded first when asked
        try:
            write_baseline(result, settings.write_baseline)
        except BaselineError as exc:
            raise SettingsError(str(exc)) from None
    if settings.baseline is not None:
        try:
            apply_baseline(result, load_baseline(settings.baseline))
        except BaselineError as exc:
            problems.append(ScanError(str(settings.baseline), "baseline", str(exc)))
    if settings.diff_base is not None:  # 4. the diff
        try:
            apply_diff(result, changed_lines(assembled.root, settings.diff_base))
        except DiffError as exc:
            raise SettingsError(f"--diff-base {settings.diff_base}: {exc}") from None
    result.configuration_errors = problems
    return result


def build_result(
    root: str,
    ruleset: Ruleset,
    active: list[Finding],
    suppressed: list[Finding],
    errors: list[ScanError],
    skipped: list[Skipped],
    coverage: Coverage,
    *,
    shard: tuple[int, int] | None = None,
    cuda_files: Sequence[tuple[str, int]] = (),
) -> ScanResult:
    """Sort, score and take inventory: the one place a ScanResult is made, by a scan and by
    `tpucheck merge` alike, so that merged shards score exactly as one scan does."""
    active = without_stray_references(sorted(active, key=Finding.sort_key))
    suppressed = sorted(suppressed, key=Finding.sort_key)
    errors = sorted(errors, key=lambda e: (e.path, e.kind, e.message))
    score = compute_score(active, ruleset.by_id())
    return ScanResult(
        root=root,
        findings=active,
        suppressed=suppressed,
        errors=errors,
        skipped=sorted(skipped, key=lambda s: s.path),
        coverage=coverage,
        score=score,
        inventory=build_inventory(active, {r.id: r.kernel_kind for r in ruleset.rules if r.kernel_kind}, cuda_files),
        rules=sorted(r.id for r in ruleset.rules),
        rule_data=ruleset.rules,
        shard=shard,
        target=ruleset.target,
    )


IgnoredFor = Callable[[str], Callable[[str], str | None]]
"""path -> (rule id -> the per-file-ignores pattern that silences it there, or None)."""


def _per_file_ignores(ruleset: Ruleset, entries: tuple[tuple[str, tuple[str, ...]], ...]) -> IgnoredFor | None:
    if not entries:
        return None
    specs = [(pattern, pathspec.GitIgnoreSpec.from_lines([pattern]), refs) for pattern, refs in entries]
    rules = ruleset.by_id()

    def ignored_for(path: str) -> Callable[[str], str | None]:
        matching = [(pattern, refs) for pattern, spec, refs in specs if spec.match_file(path)]

        def pattern_for(rule_id: str) -> str | None:
            rule = rules[rule_id]
            return next((pattern for pattern, refs in matching if any(rule_selected(rule, ref) for ref in refs)), None)

        return pattern_for

    return ignored_for
