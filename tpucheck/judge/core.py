"""Whether a kernel-capped product is a kernel library: grade F, its core is custom CUDA
(rules/judgement.yaml `score.core`).

Why the kernels' host side counts with them: a kernel library's native tree is more than
its `__global__` functions. The `.cpp` bindings that include `cuda_runtime.h`, the `.cuh`
and `.hpp` launchers, the inline PTX and the CUDA-runtime calls around the launches are
rewritten or dropped with the kernels, not ported beside them. Counted as other work, they
made a communication library whose every native file is CUDA (blind set 59: DeepEP) and a
serving engine whose attention, GEMM and layernorm are its own kernels (qserve) look like
products with a little CUDA in them, graded D. Findings of the categories in
`score.core.kernel_side` that no fallback keeps count with the kernels, in hours and in
files (a file counts when all its work is of them), where the product has a custom kernel
at all: the binding of a standard op's kernel makes no core. Grades only: the score, and with it
the proof of monotonicity, is untouched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from tpucheck.findings import Finding
from tpucheck.judge.known_ops import is_known_op
from tpucheck.judge.roles import PRODUCT_ROLES
from tpucheck.judge.shares import Share
from tpucheck.ruleset.judgement import Scoring

__all__ = ["custom_kernel", "kernel_core"]


def kernel_core(product: list[Share], findings: list[Finding], scoring: Scoring) -> str | None:
    """Why a kernel-capped product is a kernel library, or None: kernels with no fallback
    (and their host side) are most of its porting hours and at least half of its files
    that need work."""
    # A standard op's kernel (judge/known_ops.py) is neither core nor the rest: it has
    # known alternatives, so it makes no core, and it is a kernel, so it dilutes none.
    porting = [s for s in product if s.finding is not None and s.finding.severity != "info" and not is_known_op(s.finding)]
    hours = math.fsum((s.low + s.high) / 2 for s in porting)
    custom = any(s.finding is not None and custom_kernel(s.finding) for s in porting)
    # the host side is the core's only beside a custom kernel: a standard op's binding is not
    kernel = math.fsum((s.low + s.high) / 2 for s in porting if s.finding is not None and custom_kernel(s.finding))
    host = math.fsum((s.low + s.high) / 2 for s in porting if s.finding is not None and custom and not custom_kernel(s.finding) and _host_side(s.finding, scoring))
    kernel += host
    subsystem = math.fsum(
        (s.low + s.high) / 2
        for s in porting
        if s.finding is not None and s.finding.rule in scoring.core_subsystem_rules and s.finding.severity == "blocker" and not s.finding.guarded
    )
    work_findings = [f for f in findings if f.role in PRODUCT_ROLES and f.severity != "info" and not f.guarded]
    kernels = {f.path for f in findings if f.role in PRODUCT_ROLES and f.severity != "info" and custom_kernel(f)}
    sided = _host_side_files(work_findings, scoring) - {f.path for f in work_findings if is_known_op(f)} - kernels if custom else set()
    kernels |= sided
    standard = {f.path for f in findings if is_known_op(f)} - kernels  # sources of standard ops only
    work = {f.path for f in work_findings} - standard
    if not hours or not work:
        return None
    if kernel / hours >= scoring.core_hours_share and len(kernels) / len(work) >= scoring.core_files_share:
        what = "kernels with no fallback and their host side" if host or sided else "kernels with no fallback"
        return f"{what} are {kernel / hours:.0%} of the porting hours, in {len(kernels)} of the {len(work)} product files that need work"
    if subsystem and (kernel + subsystem) / hours >= scoring.core_hours_share:
        return f"CUDA-only subsystems with no TPU alternative (and kernels with no fallback) are {(kernel + subsystem) / hours:.0%} of the porting hours"
    return None


def custom_kernel(finding: Finding) -> bool:
    """A kernel with no fallback that is no standard op: what makes a core of custom CUDA
    (a standard op has known alternatives, grade D's meaning)."""
    return finding.inventory == "kernel" and not finding.guarded and not is_known_op(finding)


def _host_side(finding: Finding, scoring: Scoring) -> bool:
    """The kernels' host side (`score.core.kernel_side`) with no fallback."""
    return finding.category in scoring.core_kernel_side and not finding.guarded and not is_known_op(finding)


def _host_side_files(work: Iterable[Finding], scoring: Scoring) -> set[str]:
    """Files whose every piece of work is the kernels' host side (a binding that includes
    `cuda_runtime.h`, a launcher): rewritten with the kernels."""
    sides: dict[str, bool] = {}
    for finding in work:
        sides[finding.path] = sides.get(finding.path, True) and finding.category in scoring.core_kernel_side
    return {path for path, side in sides.items() if side}
