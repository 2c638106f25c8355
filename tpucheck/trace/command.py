"""`tpucheck trace`, parent side: refuse without consent, run the child, judge, report.

Never imports torch or the user's code: the child does, in its sandbox.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tpucheck.ruleset.model import Ruleset
from tpucheck.trace.judge import judge
from tpucheck.trace.opstatus import OpTable, load_op_table
from tpucheck.trace.report import build_report, summary
from tpucheck.trace.request import Limits, TraceRequest
from tpucheck.trace.sandbox import run_child

CONSENT = (
    "`tpucheck trace` imports and runs the model's code (in a sandboxed child process with no network, "
    "a time and memory limit, and no file writes); pass --allow-exec to let it"
)


class TraceUsage(Exception):
    """Anything the command line should report as a usage error: one line, exit 2."""


class TraceRefused(Exception):
    """No --allow-exec: nothing of the user's was imported or started."""


class TraceFailed(Exception):
    """The user's code could not be imported, built or given inputs: nothing to trace."""


@dataclass(frozen=True, slots=True)
class TraceOutcome:
    report: dict[str, Any]
    warnings: tuple[str, ...]
    timings: dict[str, float]
    """Seconds per stage and the child's peak RSS (MB): printed, never in the report."""


def torch_available() -> bool:
    """Whether torch can be found, without importing it (find_spec runs no package code)."""
    return importlib.util.find_spec("torch") is not None


def run_trace(
    request: TraceRequest,
    *,
    target: str,
    root: str,
    ruleset: Ruleset,
    limits: Limits | None = None,
    allow_exec: bool = False,
    table: OpTable | None = None,
) -> TraceOutcome:
    """Trace one request; raises TraceRefused, TraceFailed or SandboxError."""
    outcome = run_traces([request], target=target, root=root, ruleset=ruleset, limits=limits, allow_exec=allow_exec, table=table)[0]
    if isinstance(outcome, TraceFailed):
        raise outcome
    return outcome


def run_traces(
    requests: list[TraceRequest],
    *,
    target: str,
    root: str,
    ruleset: Ruleset,
    limits: Limits | None = None,
    allow_exec: bool = False,
    table: OpTable | None = None,
) -> list[TraceOutcome | TraceFailed]:
    """Trace several requests in one child (torch's import is most of a child's start-up):
    an outcome per request, or the TraceFailed saying why that one could not run."""
    if not allow_exec:
        raise TraceRefused(CONSENT)
    if not torch_available():
        raise TraceFailed("torch is not installed: `pip install 'tpucheck[trace]'` (a CPU build will do: --index-url https://download.pytorch.org/whl/cpu)")
    root = os.path.abspath(root)
    requests = [(r if r.paths else replace(r, paths=(root,))).check() for r in requests]
    table = table or load_op_table()
    output = run_child(requests, limits or Limits(), cwd=root)
    judged = ruleset.for_target(target)
    outcomes: list[TraceOutcome | TraceFailed] = []
    for request, result in zip(requests, output.data["results"]):
        if "error" in result:
            error = result["error"]
            site = error.get("site")
            where = f" ({os.path.relpath(site[0], root)}:{site[1]})" if site else ""
            outcomes.append(TraceFailed(f"could not trace the model: {error['message']}{where}"))
            continue
        report = build_report(request, result, root=root, target=target, table=table, environment=output.data["environment"], network=output.network)
        report["findings"] = [f.to_json() for f in judge(report["phases"], target, judged, table)]
        report["summary"] = summary(report)
        warnings = list(output.warnings)
        if result.get("route_note") and result.get("route") == "fake-cpu":
            warnings.append(str(result["route_note"]))
        timings = {f"{phase} s": float(observed["seconds"]) for phase, observed in result.get("phases", {}).items()}
        timings["graph breaks s"] = round(sum(float(o.get("explain_seconds", 0.0)) for o in result.get("phases", {}).values()), 3)
        timings["build s"] = float(result.get("build_seconds", 0.0))
        timings["peak MB"] = float(result.get("peak_rss_mb", 0.0))
        outcomes.append(TraceOutcome(report, tuple(warnings), timings))
    return outcomes


def cli_trace(
    *,
    model: str,
    inputs: str,
    loss: str | None,
    optimizer: str | None,
    phases: tuple[str, ...],
    target: str,
    device: str,
    dtype: str,
    graph_breaks: bool,
    root: Path,
    allow_exec: bool,
    timeout: float,
    memory_mb: int,
    output_format: str,
    fail_on: str | None,
    quiet: bool,
    ruleset: Ruleset,
    write: Callable[[str], None],
) -> int:
    """`tpucheck trace`'s body: the exit code (0, or 1 when --fail-on trips); TraceUsage
    for anything that is a usage error (the refusal, bad references, a run that failed)."""
    import io
    import sys

    from tpucheck.findings import SEVERITIES, severity_rank
    from tpucheck.trace import render
    from tpucheck.trace.report import dumps
    from tpucheck.trace.request import RequestError
    from tpucheck.trace.sandbox import SandboxError

    if output_format not in ("terminal", "json"):
        raise TraceUsage(f"unknown format {output_format!r}: choose terminal or json")
    if target not in ("torchtpu", "xla"):
        raise TraceUsage(f"unknown target {target!r}: choose torchtpu or xla")
    if fail_on is not None and fail_on not in SEVERITIES:
        raise TraceUsage(f"unknown severity {fail_on!r}: choose one of {', '.join(SEVERITIES)}")
    if not root.is_dir():
        raise TraceUsage(f"not a directory: {root}")
    try:
        request = TraceRequest(model, inputs, loss, optimizer, phases, device, dtype, graph_breaks).check()
        outcome = run_trace(request, target=target, root=str(root), ruleset=ruleset, limits=Limits(seconds=timeout, memory_mb=memory_mb), allow_exec=allow_exec)
    except (RequestError, TraceRefused, TraceFailed, SandboxError) as exc:
        raise TraceUsage(str(exc)) from None
    if not quiet:
        for warning in outcome.warnings:
            print(f"tpucheck: warning: {warning}", file=sys.stderr)
        print("tpucheck: traced in " + ", ".join(f"{k} {v:g}" for k, v in outcome.timings.items()), file=sys.stderr)
    if output_format == "json":
        write(dumps(outcome.report))
    else:
        buffer = io.StringIO()
        render.write_terminal(outcome.report, buffer)
        write(buffer.getvalue())
    if fail_on is not None:
        tripped = [f for f in outcome.report["findings"] if severity_rank(f["severity"]) <= severity_rank(fail_on)]
        if tripped:
            print(f"tpucheck: gate failed: {len(tripped)} findings at or above {fail_on}", file=sys.stderr)
            return 1
    return 0
