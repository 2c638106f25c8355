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

from tpucheck.config.settings import Settings, SettingsError
from tpucheck.findings import Finding, ScanError, Skipped
from tpucheck.gates.baseline import BaselineError, apply_baseline, load_baseline, write_baseline
from tpucheck.gates.diff import DiffError, apply_diff, changed_lines
from tpucheck.judge.roles import Roles
from tpucheck.judge.verdict import build_result
from tpucheck.result import Coverage, ScanResult
from tpucheck.ruleset.model import Ruleset
from tpucheck.ruleset.select import rule_selected

__all__ = ["Assembled", "finish"]


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
    set_aside: list[Finding] = field(default_factory=list)
    """Findings the judgement reports apart, unscored, each with its reason."""
    workloads: tuple[str, ...] = ()
    """The workloads the product has (training, inference): each needs a validation run."""


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

        roles = Roles(assembled.ruleset.judgement)
        active, evidence = apply_trace(active, assembled.ruleset, load_report(settings.trace), assembled.root, str(settings.trace), roles.role_of)
    result = build_result(
        assembled.root, assembled.ruleset, active, suppressed, assembled.errors, assembled.skipped,
        assembled.coverage, shard=assembled.shard, cuda_files=assembled.cuda_files,
        set_aside=assembled.set_aside, workloads=assembled.workloads,
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
