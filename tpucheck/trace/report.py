"""The trace report: versioned, sorted JSON that `tpucheck trace` writes and `tpucheck scan
--trace` reads back (validated: a bad file is one line and exit 2, never a traceback).

Observations (ops with their user lines, host syncs, dynamic shapes, graph breaks) are kept
apart from the findings judged from them, so a report can be judged again for another
target. Nothing in it depends on timing or on the order ops ran in, beyond "first".
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tpucheck import __version__
from tpucheck.trace.opstatus import OpTable
from tpucheck.trace.request import PHASES, TraceRequest

SCHEMA_VERSION = "1"
KIND = "tpucheck-trace"


class TraceReportError(Exception):
    """A file that is not a trace report this version reads; str() is one line."""


def _place(path: str | None, root: str) -> str | None:
    """Relative to the traced root (as a scan's paths are), absolute outside it."""
    if not path:
        return None
    absolute = os.path.abspath(path)
    try:
        inside = os.path.commonpath([absolute, root]) == root
    except ValueError:
        inside = False
    return Path(os.path.relpath(absolute, root)).as_posix() if inside else absolute


def _ops(raw_ops: Mapping[str, Any], root: str, target: str, table: OpTable, limit: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    device_ops, host_ops = [], []
    for name in sorted(raw_ops):
        raw = raw_ops[name]
        if not raw["on_device"]:
            host_ops.append({"op": name, "calls": raw["count"]})
            continue
        sites = [(_place(path, root), line, stage, count) for path, line, stage, count in raw["sites"]]
        first = sites[0] if sites else None
        kept = sorted(range(len(sites)), key=lambda i: (-sites[i][3], i))[:limit]
        status = table.status(name, target)
        device_ops.append(
            {
                "op": name,
                "calls": raw["on_device"],
                "status": status.status,
                "via": list(status.via),
                "note": status.note,
                "first": {"path": first[0], "line": first[1]} if first else None,
                "sites": sorted(
                    ({"path": sites[i][0], "line": sites[i][1], "stage": sites[i][2], "calls": sites[i][3]} for i in kept),
                    key=lambda s: (s["path"] or "", s["line"], s["stage"]),
                ),
                "sites_dropped": max(0, len(sites) - limit),
                "unattributed": dict(sorted(raw.get("unattributed", {}).items())),
            }
        )
    return device_ops, host_ops


def _events(raw_events: list[dict[str, Any]], root: str) -> list[dict[str, Any]]:
    events = [
        {"kind": e["kind"], "op": e.get("op"), "path": _place(e.get("path"), root), "line": e.get("line"), "stage": e["stage"], "detail": e["detail"], "count": e.get("count", 1)}
        for e in raw_events
    ]
    return sorted(events, key=lambda e: (e["kind"], e["path"] or "~", e["line"] or 0, e["op"] or "", e["stage"], e["detail"]))


def build_report(
    request: TraceRequest,
    raw: Mapping[str, Any],
    *,
    root: str,
    target: str,
    table: OpTable,
    environment: Mapping[str, Any],
    network: str,
) -> dict[str, Any]:
    """The report of one traced request, findings not yet judged (see `with_findings`)."""
    root = os.path.abspath(root)
    phases: dict[str, Any] = {}
    for phase in PHASES:
        observed = raw.get("phases", {}).get(phase)
        if observed is None:
            continue
        ops, host_ops = _ops(observed["ops"], root, target, table, request.sites_per_op)
        phases[phase] = {
            "status": observed["status"],
            "note": _relative_note(observed.get("note"), root),
            "ops": ops,
            "host_ops": host_ops,
            "events": _events(observed.get("events", []), root),
        }
    request_data = request.to_json()
    request_data.pop("paths", None)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "tool": {"name": "tpucheck", "version": __version__},
        "root": root,
        "target": target,
        "request": request_data,
        "environment": {
            "torch": environment.get("torch"),
            "python": environment.get("python"),
            "route": raw.get("route"),
            "device": raw.get("device"),
            "route_note": raw.get("route_note"),
            "network": network,
            "limits_not_set": list(environment.get("limits_not_set", [])),
            "op_table": table.provenance(),
        },
        "phases": phases,
        "findings": [],
    }


def _relative_note(note: str | None, root: str) -> str | None:
    return note.replace(root + os.sep, "") if note else note


UNSUPPORTED_RULES = ("RT001", "RT002")


def summary(report: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per phase: distinct ops on the device, their calls, and how many the target does
    not run (the ops of its op-missing and CPU-fallback findings)."""
    out = {}
    for phase, observed in report["phases"].items():
        ops = observed["ops"]
        out[phase] = {
            "ops": len(ops),
            "calls": sum(op["calls"] for op in ops),
            "unsupported": len({f["op"] for f in report["findings"] if f["phase"] == phase and f["rule"] in UNSUPPORTED_RULES}),
        }
    return out


def dumps(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema_version": str, "kind": str, "root": str, "target": str, "request": dict, "environment": dict, "phases": dict, "findings": list,
}  # fmt: skip


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a trace report; TraceReportError says what is wrong, in one line."""
    name = os.fspath(path)
    try:
        data = json.loads(Path(name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceReportError(f"cannot read trace report {name}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise TraceReportError(f"{name} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise TraceReportError(f"{name} is not a tpucheck trace report (write one with `tpucheck trace ... --format json -o FILE`)")
    for key, kind in _REQUIRED.items():
        if not isinstance(data.get(key), kind):
            raise TraceReportError(f"{name}: `{key}` is missing or not a {getattr(kind, '__name__', kind)}")
    if data["schema_version"].split(".", 1)[0] != SCHEMA_VERSION:
        raise TraceReportError(f"{name}: trace report schema {data['schema_version']} is not {SCHEMA_VERSION}.x, which this tpucheck reads")
    try:
        for phase, observed in data["phases"].items():
            if phase not in PHASES:
                raise ValueError(f"unknown phase {phase!r}")
            for op in observed["ops"]:
                str(op["op"]), int(op["calls"])
                for site in op["sites"]:
                    (site["path"] is None or str(site["path"])), int(site["line"]), str(site["stage"]), int(site["calls"])
                dict(op.get("unattributed", {}))
            for event in observed["events"]:
                str(event["kind"]), str(event["stage"]), str(event["detail"])
                if event.get("line") is not None:
                    int(event["line"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TraceReportError(f"{name}: malformed phases ({type(exc).__name__}: {exc})") from None
    return data
