"""Start the child that runs the user's code, fenced, and read its report. Parent side:
never imports torch or the user's modules.

The fences, outermost first: a network namespace of its own (`unshare -n`, or `unshare
--map-root-user -n` where user namespaces allow it without root), so nothing it runs can
reach the network, a cloud metadata server included; a new session, killed whole at the
wall-clock limit; an environment with torch's device-backend autoload off, so no TPU
runtime is ever initialised (libtpu without a TPU polls a metadata server for minutes), and
a private, empty TMPDIR removed afterwards. Inside, the child sets CPU, address-space and
file-size limits (it can write no file) and refuses sockets (tpucheck.trace.guard).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tpucheck.trace.request import Limits, TraceRequest

CHILD_MODULE = "tpucheck.trace.child"
STDERR_TAIL = 2000
"""Characters of the child's stderr kept for an error message."""


class SandboxError(Exception):
    """The child could not run, timed out, or answered with something other than a report."""


@dataclass(frozen=True, slots=True)
class ChildOutput:
    data: dict[str, Any]
    network: str
    """"namespace": no network at all; "guard": only the child's socket guard (with why)."""
    warnings: tuple[str, ...]


@lru_cache(maxsize=1)
def network_wrapper() -> tuple[tuple[str, ...], str | None]:
    """The command prefix that gives the child no network, and None; or () and why not."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return (), "no `unshare` here (Linux's util-linux): the network is not isolated, only refused by the child's socket guard"
    candidates: list[tuple[str, ...]] = [(unshare, "-n", "--")] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    candidates.append((unshare, "--map-root-user", "-n", "--"))
    reason = ""
    for prefix in candidates:
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = str(exc)
            continue
        if probe.returncode == 0:
            return prefix, None
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1] if said else f"exit {probe.returncode}"
    return (), f"cannot make a network namespace ({reason}): the network is not isolated, only refused by the child's socket guard"


def child_environment(tmpdir: str, extra: dict[str, str]) -> dict[str, str]:
    """The parent's environment, minus what would load a TPU runtime or reach out, plus
    the settings that keep the child quiet and self-contained."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TPU_", "XLA_", "PJRT_", "LIBTPU"))}
    env.update(
        {
            "TORCH_DEVICE_BACKEND_AUTOLOAD": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "TMPDIR": tmpdir,
            "TORCHINDUCTOR_CACHE_DIR": tmpdir,
            "TRITON_CACHE_DIR": tmpdir,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "NO_PROXY": "*",
            "PYTHONWARNINGS": "ignore",
        }
    )
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(package_root), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def run_child(requests: list[TraceRequest], limits: Limits, *, cwd: str, python: str | None = None) -> ChildOutput:
    """Trace `requests` in one child (they share its start-up: torch's import is most of
    it) and return its raw output."""
    wrapper, why_not = network_wrapper()
    warnings = (why_not,) if why_not else ()
    payload = json.dumps({"jobs": [r.to_json() for r in requests], "limits": {"seconds": limits.seconds, "memory_mb": limits.memory_mb}})
    tmpdir = tempfile.mkdtemp(prefix="tpucheck-trace-")
    try:
        command = [*wrapper, python or sys.executable, "-m", CHILD_MODULE]
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=child_environment(tmpdir, limits.extra_env),
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(payload.encode("utf-8"), timeout=limits.seconds)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()
            raise SandboxError(f"the traced code did not finish within {limits.seconds:g} s (raise it with --timeout)") from None
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    tail = stderr.decode("utf-8", "replace")[-STDERR_TAIL:].strip()
    if process.returncode != 0 or not stdout.strip():
        last = tail.splitlines()[-1] if tail else f"exit status {process.returncode}"
        if process.returncode and process.returncode < 0:
            last = f"killed by signal {-process.returncode}" + (f" ({last})" if tail else "") + (
                "; the memory limit may be too low (--memory-mb)" if -process.returncode in (signal.SIGKILL, signal.SIGSEGV) else ""
            )
        raise SandboxError(f"the trace child failed: {last}")
    try:
        data = json.loads(stdout)
    except ValueError as exc:
        raise SandboxError(f"the trace child wrote no valid report: {exc}") from None
    if not isinstance(data, dict):
        raise SandboxError("the trace child wrote no valid report")
    if "fatal" in data:
        raise SandboxError(str(data["fatal"]))
    return ChildOutput(data, "namespace" if wrapper else "guard", warnings)


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
