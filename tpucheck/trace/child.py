"""The sandboxed child: `python -m tpucheck.trace.child`, a TraceRequest as JSON on stdin,
the raw trace as JSON on stdout. The parent (tpucheck.trace.sandbox) starts it in a network
namespace where it can, with a time limit; here it fences itself (resource limits, no file
growth, no sockets) before importing torch or anything of the user's.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from typing import Any


def main() -> int:
    from tpucheck.trace.guard import block_network, limit_resources, private_stdout

    report_fd = private_stdout()
    raw = json.loads(sys.stdin.read() or "{}")
    problems = limit_resources(float(raw.get("limits", {}).get("seconds", 120)), int(raw.get("limits", {}).get("memory_mb", 8192)))
    block_network()
    out = run(raw.get("jobs", []), problems)
    with os.fdopen(report_fd, "w", encoding="utf-8") as stream:
        json.dump(out, stream, sort_keys=True)
    return 0


def run(jobs: list[dict[str, Any]], problems: list[str]) -> dict[str, Any]:
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # set by the parent too: never load a TPU runtime
    try:
        import torch
    except ImportError as exc:
        return {"fatal": f"torch is not importable in the child ({exc}); install the extra: pip install 'tpucheck[trace]'"}
    from tpucheck.trace.device import setup
    from tpucheck.trace.request import TraceRequest

    routes: dict[str, Any] = {}  # the fake route renames a backend: set up once per process
    results = []
    for job in jobs:
        request = TraceRequest.from_json(job)
        if request.device not in routes:
            routes[request.device] = setup(request.device)
        results.append(trace_one(request, routes[request.device]))
    return {
        "environment": {"torch": torch.__version__, "python": platform.python_version(), "limits_not_set": problems},
        "results": results,
    }


def trace_one(request: Any, route: Any) -> dict[str, Any]:
    import resource
    import time

    from tpucheck.trace.harness import Harness, UserCodeError

    started = time.perf_counter()
    harness = Harness(request, route)
    base = {"route": route.name, "device": route.device, "route_note": route.note}
    try:
        model, batch = harness.build()
    except UserCodeError as exc:
        return {**base, "error": {"stage": exc.stage, "message": str(exc), "site": list(exc.site) if exc.site else None}}
    build_seconds = time.perf_counter() - started
    phases = {}
    for phase in request.phases:
        result = harness.run_phase(phase, model, batch)
        result["ops"] = {
            name: {
                "count": rec.count,
                "on_device": rec.on_device,
                "sites": [[path, line, stage, count] for (path, line, stage), count in rec.sites.items()],
                "unattributed": dict(rec.unattributed),
            }
            for name, rec in result["ops"].items()
        }
        result["events"] = [vars(event) for event in result["events"]]
        phases[phase] = result
    return {**base, "phases": phases, "build_seconds": round(build_seconds, 3), "child_seconds": round(time.perf_counter() - started, 3), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


if __name__ == "__main__":
    sys.exit(main())
