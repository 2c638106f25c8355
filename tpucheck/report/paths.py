"""Paths as people open them: relative to the folder the command runs in (ruff's way) when
the scanned root is below it, absolute otherwise.

Findings carry root-relative paths (what fingerprints hash and JSON/SARIF record with the
root beside them); the formats people read in a terminal, an editor or a pull request
(terminal, concise, GitHub, Markdown) show them from where the user stands, so a path
clicks through and `tpucheck scan some/dir` and `tpucheck scan some/dir/x.py` print the
same path for the same finding.
"""

from __future__ import annotations

import os
from dataclasses import replace

from tpucheck.findings import Finding
from tpucheck.result import Inventory, ScanResult

__all__ = ["display_prefix", "from_here"]

HERE_FORMATS = frozenset({"terminal", "concise", "github", "markdown"})


def display_prefix(root: str, cwd: str | None = None) -> str:
    """What to put before a root-relative path: '' for the current folder, `sub/dir/`
    below it, the absolute root elsewhere."""
    here = os.path.abspath(cwd or os.getcwd())
    absolute = os.path.abspath(root)
    if os.path.isfile(absolute):
        absolute = os.path.dirname(absolute)
    if absolute == here:
        return ""
    if os.path.commonpath([here, absolute]) == here:
        return os.path.relpath(absolute, here).replace(os.sep, "/") + "/"
    return absolute.replace(os.sep, "/").rstrip("/") + "/"


def from_here(result: ScanResult, prefix: str) -> ScanResult:
    """A copy of the result whose paths carry `prefix`; the original is left as it is."""
    if not prefix:
        return result

    def moved(findings: list[Finding]) -> list[Finding]:
        return [replace(f, path=prefix + f.path) for f in findings]

    inventory = result.inventory
    shown = Inventory(
        kernels=tuple(replace(k, path=prefix + k.path) for k in inventory.kernels),
        packages=tuple(replace(p, paths=tuple(prefix + q for q in p.paths)) for p in inventory.packages),
        training_findings=inventory.training_findings,
        inference_findings=inventory.inference_findings,
        tpu_support=tuple(replace(t, paths=tuple(prefix + q for q in t.paths)) for t in inventory.tpu_support),
        cuda_sources=tuple(replace(c, path=prefix + c.path) for c in inventory.cuda_sources),
    )
    copy = replace(
        result,
        findings=moved(result.findings),
        suppressed=moved(result.suppressed),
        errors=[replace(e, path=prefix + e.path) for e in result.errors],
        skipped=[replace(s, path=prefix + s.path) for s in result.skipped],
        inventory=shown,
    )
    return copy
