"""The verdict of a scan: its findings sorted, scored and taken inventory of, in the
one shape every report formats. A scan and `tpucheck merge` both end here, so merged
shards score exactly as one scan does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tpucheck.findings import Finding, ScanError, Skipped
from tpucheck.judge.score import compute_score, without_stray_references
from tpucheck.result import Coverage, CudaSource, Inventory, KernelEntry, PackageEntry, ScanResult, SupportEntry
from tpucheck.ruleset.model import Ruleset

__all__ = ["build_inventory", "build_result"]


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
    set_aside: Sequence[Finding] = (),
    workloads: Sequence[str] = (),
) -> ScanResult:
    """Sort, score and take inventory: the one place a ScanResult is made, by a scan and by
    `tpucheck merge` alike, so that merged shards score exactly as one scan does."""
    active = without_stray_references(sorted(active, key=Finding.sort_key))
    suppressed = sorted(suppressed, key=Finding.sort_key)
    errors = sorted(errors, key=lambda e: (e.path, e.kind, e.message))
    score = compute_score(active, ruleset.by_id(), ruleset.judgement, workloads, coverage.product_lines)
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
        set_aside=sorted(set_aside, key=Finding.sort_key),
        workloads=tuple(w for w in ("training", "inference") if w in workloads),
    )


def build_inventory(
    findings: list[Finding],
    kernel_kinds: Mapping[str, str] | None = None,
    cuda_files: Iterable[tuple[str, int]] = (),
) -> Inventory:
    """`kernel_kinds`: rule id -> its kernel_kind; `cuda_files`: (path, lines) of every
    CUDA source analyzed, which the inventory lists whether or not any rule matched in it."""
    kinds = kernel_kinds or {}
    kernels = tuple(
        KernelEntry(f.path, f.span.line, f.detail, f.rule, kinds.get(f.rule, "other"))
        for f in findings
        if f.inventory == "kernel"
    )
    per_file: dict[tuple[str, str], int] = {}
    for kernel in kernels:
        per_file[kernel.path, kernel.kind] = per_file.get((kernel.path, kernel.kind), 0) + 1
    cuda_sources = tuple(
        CudaSource(path, lines, per_file.get((path, "launched"), 0), per_file.get((path, "device-helper"), 0))
        for path, lines in sorted(set(cuda_files))
    )
    grouped: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if finding.inventory == "package":
            grouped.setdefault((finding.name, finding.rule), []).append(finding)
    packages = tuple(
        PackageEntry(name, rule, len(items), tuple(sorted({f.path for f in items})), items[0].fix)
        for (name, rule), items in sorted(grouped.items())
    )
    support: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.inventory == "tpu-support":
            support.setdefault(finding.detail or finding.name, []).append(finding)
    return Inventory(
        tpu_support=tuple(
            SupportEntry(name, len(items), tuple(sorted({f.path for f in items}))) for name, items in sorted(support.items())
        ),
        kernels=kernels,
        cuda_sources=cuda_sources,
        packages=packages,
        training_findings=sum("training" in f.affects for f in findings),
        inference_findings=sum("inference" in f.affects for f in findings),
    )
