"""The trace report for people: per phase, every op with its calls, status on the target
and the first user line that reached it; then the findings. Plain text, deterministic."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from tpucheck.findings import SEVERITIES

ROUTES = {
    "fake-tpu": 'a pretend "tpu" device (fake tensors: no data, no memory)',
    "fake-cpu": "fake tensors on CPU semantics (no pretend tpu device on this torch)",
    "meta": "the meta device (no data)",
    "cpu": "the CPU (real tensors)",
}
TARGETS = {"torchtpu": "TorchTPU", "xla": "PyTorch/XLA"}


def _place(path: str | None, line: int | None) -> str:
    return f"{path}:{line}" if path else "(no user frame)"


def write_terminal(report: Mapping[str, Any], stream: TextIO) -> None:
    env = report["environment"]
    request = report["request"]
    stream.write(f"tpucheck trace {request['model']} on {ROUTES.get(env['route'], env['route'])}, torch {env['torch']}, judged for {TARGETS.get(report['target'], report['target'])}\n")
    if env.get("route_note"):
        stream.write(f"  note: {env['route_note']}\n")
    for phase, observed in report["phases"].items():
        counts = report["summary"][phase]
        stream.write(f"\n{phase}: {counts['ops']} ops, {counts['calls']} calls, {counts['unsupported']} not run by the target; {observed['status']}\n")
        if observed.get("note"):
            stream.write(f"  {observed['note']}\n")
        width = max((len(op["op"]) for op in observed["ops"]), default=10)
        for op in observed["ops"]:
            first = op["first"]
            where = _place(first["path"], first["line"]) if first else "(" + ", ".join(op["unattributed"]) + ")"
            status = op["status"] + ("*" if op["status"] == "decomposed" and op.get("note") and "assumed" in op["note"] else "")
            stream.write(f"  {op['op']:<{width}}  {op['calls']:>6}  {status:<12}  {where}\n")
        if observed["host_ops"]:
            stream.write(f"  on host data only (not judged): {', '.join(o['op'] for o in observed['host_ops'])}\n")
    findings = report["findings"]
    stream.write("\nfindings:\n" if findings else "\nno findings\n")
    for f in findings:
        stream.write(f"  {_place(f['path'], f['line'])}: {f['rule']} [{f['severity']}] {f['phase']}: {f['message']}\n")
    counts = {s: sum(f["severity"] == s for f in findings) for s in SEVERITIES}
    listed = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    stream.write(f"\n{len(findings)} finding{'' if len(findings) == 1 else 's'}" + (f" ({listed})" if listed else "") + "; * decomposed by PyTorch's generic composite, assumed covered\n")
