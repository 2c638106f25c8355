"""ScanResult: everything a scan concluded, in the one shape every report formats.

Reports never compute: the score, the plan, the inventory and the coverage are all
here, so the terminal, JSON and later HTML/SARIF views can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tpucheck import __version__
from tpucheck.findings import (
    CATEGORIES,
    SEVERITIES,
    Finding,
    ScanError,
    Skipped,
    severity_rank,
)
from tpucheck.judge.score import Score
from tpucheck.ruleset.model import DEFAULT_TARGET, Rule

if TYPE_CHECKING:
    from tpucheck.trace.overlay import RunEvidence

SCHEMA_VERSION = "1.3"
"""1.1 added root, gate, shard, configuration_errors and the baselined/outside_diff marks;
1.2 the target, the effort split (supporting, performance), contributors, plan phases;
1.3 each finding's `because`, the set-aside findings, workloads, optional effort;
`scan --trace`: a finding's `evidence` (confirmed, runtime) and the `trace` section."""


@dataclass(frozen=True, slots=True)
class Coverage:
    files_found: int
    files_analyzed: int
    """Files read and analyzed, parsed or screened out by the prefilter."""
    files_parsed: int
    files_errored: int
    files_skipped: int
    lines_scanned: int
    product_lines: int = 0
    """Lines of the product's own Python that names torch (not tests, examples, benchmarks,
    docs, nor code priced apart, nor modules that never touch torch): what its validation
    run has to cover."""

    @property
    def files_screened(self) -> int:
        """Analyzed without parsing: the prefilter found nothing any rule looks for."""
        return self.files_analyzed - self.files_parsed

    def to_dict(self) -> dict[str, int]:
        return {
            "files_found": self.files_found,
            "files_analyzed": self.files_analyzed,
            "files_parsed": self.files_parsed,
            "files_screened": self.files_screened,
            "files_errored": self.files_errored,
            "files_skipped": self.files_skipped,
            "lines_scanned": self.lines_scanned,
            "product_lines": self.product_lines,
        }


@dataclass(frozen=True, slots=True)
class KernelEntry:
    path: str
    line: int
    name: str | None
    rule: str
    kind: str = "other"
    """The rule's `kernel_kind`: launched, device-helper, triton, extension ... ("other" when
    the rule gives none), so effort can price kernels by kind."""


CUDA_SOURCE_SUFFIXES: tuple[str, ...] = (".cu", ".cuh")


def is_cuda_source(path: str) -> bool:
    return path.lower().endswith(CUDA_SOURCE_SUFFIXES)


@dataclass(frozen=True, slots=True)
class CudaSource:
    """One `.cu`/`.cuh` file: counted whatever it holds, because a file that only
    instantiates templates is still CUDA code to drop or port, and its size is the work."""

    path: str
    lines: int
    kernels: int
    """Launched (`__global__`) kernels defined in it."""
    device_helpers: int
    """Device helper functions defined in it."""


@dataclass(frozen=True, slots=True)
class PackageEntry:
    name: str
    rule: str
    occurrences: int
    paths: tuple[str, ...]
    fix: str


@dataclass(frozen=True, slots=True)
class SupportEntry:
    """TPU or XLA support the code already has (`import torch_xla`, a `"tpu"` branch)."""

    name: str
    occurrences: int
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Inventory:
    kernels: tuple[KernelEntry, ...]
    packages: tuple[PackageEntry, ...]
    training_findings: int
    inference_findings: int
    tpu_support: tuple[SupportEntry, ...] = ()
    cuda_sources: tuple[CudaSource, ...] = ()

    @property
    def ported_kernels(self) -> tuple[KernelEntry, ...]:
        """Kernels to port, without the device helper functions that are part of them."""
        return tuple(k for k in self.kernels if k.kind != "device-helper")

    def to_dict(self) -> dict[str, object]:
        return {
            "kernels": [{"path": k.path, "line": k.line, "name": k.name, "rule": k.rule, "kind": k.kind} for k in self.kernels],
            "packages": [
                {"name": p.name, "rule": p.rule, "occurrences": p.occurrences, "paths": list(p.paths), "fix": p.fix}
                for p in self.packages
            ],
            "workloads": {"training": self.training_findings, "inference": self.inference_findings},
            "tpu_support": [{"name": t.name, "occurrences": t.occurrences, "paths": list(t.paths)} for t in self.tpu_support],
            "cuda_sources": [
                {"path": c.path, "lines": c.lines, "kernels": c.kernels, "device_helpers": c.device_helpers} for c in self.cuda_sources
            ],
        }


@dataclass(slots=True)
class ScanResult:
    root: str
    findings: list[Finding]
    suppressed: list[Finding]
    errors: list[ScanError]
    skipped: list[Skipped]
    coverage: Coverage
    score: Score
    inventory: Inventory
    rules: list[str] = field(default_factory=list)
    """Ids of the rules the scan ran."""
    rule_data: tuple[Rule, ...] = ()
    """The rules themselves, for reports that describe them (SARIF's rule metadata)."""
    baseline: str | None = None
    """The baseline file whose findings are marked `baselined`."""
    diff_base: str | None = None
    """The git ref whose diff decides which findings are `outside_diff`."""
    shard: tuple[int, int] | None = None
    """(K, N) when this is the K-th of N shards; `tpucheck merge` combines them."""
    target: str = DEFAULT_TARGET
    """What the findings were judged against: torchtpu or xla."""
    configuration_errors: list[ScanError] = field(default_factory=list)
    """Problems in config, rule or baseline files: the scan went on without the bad parts,
    and the command exits 2 after reporting."""
    set_aside: list[Finding] = field(default_factory=list)
    """Findings reported apart and not scored, each with its reason (`because`): code of
    another accelerator, older versions of the product, a test's own performance."""
    workloads: tuple[str, ...] = ()
    """The product's workloads (training, inference), each validated on the target."""
    trace: RunEvidence | None = None
    """`scan --trace`: the run whose evidence confirmed findings or added its own."""

    def same_edit(self) -> list[Finding]:
        """Set-aside findings that are one edit with a reported one: a codemod fixes both."""
        return [f for f in self.set_aside if f.because and f.because[-1].rule == "set-aside.same-edit"]

    def set_aside_counts(self) -> dict[str, int]:
        """Set-aside findings by the reason that set them aside: the last `set-aside.*`
        reason, else the last reason (a dead-version guard comes before the severity cap
        its guard adds)."""
        counts: dict[str, int] = {}
        for finding in self.set_aside:
            rules = [r.rule for r in finding.because]
            rule = next((r for r in reversed(rules) if r.startswith("set-aside.")), rules[-1] if rules else "unknown")
            counts[rule] = counts.get(rule, 0) + 1
        return dict(sorted(counts.items()))


    def gated_findings(self) -> list[Finding]:
        """What `--fail-on` judges: not baselined, and in the diff when one was given."""
        return [f for f in self.findings if f.gated]

    def gate_scope(self) -> str | None:
        """One sentence on what the gate judged, when a baseline or diff narrowed it; every
        report shows the same words."""
        if not (self.baseline or self.diff_base):
            return None
        parts = [f"{len(self.gated_findings())} new findings"]
        if self.baseline:
            parts.append(f"{self.baselined_count()} baselined ({self.baseline})")
        if self.diff_base:
            parts.append(f"{self.outside_diff_count()} outside the diff since {self.diff_base}")
        return ", ".join(parts) + "; the score counts them all"

    def baselined_count(self) -> int:
        return sum(f.baselined for f in self.findings)

    def outside_diff_count(self) -> int:
        return sum(f.outside_diff and not f.baselined for f in self.findings)

    def files_by_severity(self) -> list[tuple[str, str, dict[str, int]]]:
        """(path, role, counts by severity), most severe and most findings first: where the
        work sits. Held here so every report ranks files the same way."""
        per_file: dict[str, list[Finding]] = {}
        for finding in self.findings:
            per_file.setdefault(finding.path, []).append(finding)
        ranked = sorted(per_file.items(), key=lambda kv: (min(severity_rank(f.severity) for f in kv[1]), -len(kv[1]), kv[0]))
        return [
            (path, findings[0].role, {s: sum(f.severity == s for f in findings) for s in SEVERITIES})
            for path, findings in ranked
        ]

    def help_links(self) -> dict[str, str]:
        """Rule id -> its section in docs/rules.md."""
        return {rule.id: rule.help_uri for rule in self.rule_data}

    def counts_by_severity(self, findings: list[Finding] | None = None) -> dict[str, int]:
        """Of all findings, or of a subset such as `gated_findings()`."""
        counts = dict.fromkeys(SEVERITIES, 0)
        for finding in self.findings if findings is None else findings:
            counts[finding.severity] += 1
        return counts

    def counts_by_category_and_severity(self) -> dict[str, dict[str, int]]:
        """Category -> severity -> findings, every category in the fixed order."""
        counts = {category: dict.fromkeys(SEVERITIES, 0) for category in CATEGORIES}
        for finding in self.findings:
            counts.setdefault(finding.category, dict.fromkeys(SEVERITIES, 0))[finding.severity] += 1
        return counts

    def counts_by_category(self) -> dict[str, int]:
        counts = dict.fromkeys(CATEGORIES, 0)
        for finding in self.findings:
            counts[finding.category] = counts.get(finding.category, 0) + 1  # a team's own categories follow
        return counts

    def to_dict(self) -> dict[str, object]:
        score = self.score
        data: dict[str, object] = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "tpucheck", "version": __version__},
            "root": self.root,
            "summary": {
                "target": self.target,
                "score": score.score,
                "grade": score.grade,
                "grade_meaning": score.grade_meaning,
                "effort_hours": score.effort.to_dict(),
                "supporting_effort_hours": score.supporting_effort.to_dict(),
                "performance_effort_hours": score.performance_effort.to_dict(),
                "training_score": score.training,
                "inference_score": score.inference,
                "files_scanned": self.coverage.files_analyzed,
                "lines_scanned": self.coverage.lines_scanned,
                "findings": len(self.findings),
                "suppressed": len(self.suppressed),
                "errors": len(self.errors),
                "by_severity": self.counts_by_severity(),
                "by_category": self.counts_by_category(),
                "cost": score.cost,
                "contributors": [c.to_dict() for c in score.contributors],
                "baselined": self.baselined_count(),
                "outside_diff": self.outside_diff_count(),
                "gated": len(self.gated_findings()),
                "set_aside": self.set_aside_counts(),
                "workloads": list(self.workloads),
                "optional_effort_hours": score.optional_effort.to_dict(),
            },
            "gate": {"baseline": self.baseline, "diff_base": self.diff_base},
            "coverage": self.coverage.to_dict(),
            "inventory": self.inventory.to_dict(),
            "plan": [item.to_dict() for item in score.plan],
            "findings": [f.to_dict() for f in self.findings],
            "suppressed": [f.to_dict() for f in self.suppressed],
            "set_aside": [f.to_dict() for f in self.set_aside],
            "errors": [e.to_dict() for e in self.errors],
            "skipped": [s.to_dict() for s in self.skipped],
            "configuration_errors": [e.to_dict() for e in self.configuration_errors],
            "rules": self.rules,
        }
        if self.shard is not None:
            data["shard"] = f"{self.shard[0]}/{self.shard[1]}"
        if self.trace is not None:
            data["trace"] = self.trace.to_dict()
        return data
