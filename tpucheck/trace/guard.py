"""The child's own fences, set before any user code (or torch) is imported.

The parent runs the child in a network namespace where the OS allows it; these are the
second line, and the only one where it does not: resource limits, no file growth, and a
socket layer that refuses to reach any address, so that a model that phones home fails
at once instead of hanging until the time limit.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import Any, NoReturn


class NetworkDisabled(PermissionError):
    """Raised by every socket operation that would reach the network."""


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise NetworkDisabled("tpucheck trace: networking is disabled while a model is traced")


def _is_local_socket(sock: socket.socket) -> bool:
    return getattr(socket, "AF_UNIX", None) is not None and sock.family == socket.AF_UNIX


def block_network() -> None:
    """Refuse name lookups and every connect/send/bind on an IP socket. Unix sockets (which
    reach nothing outside the machine) keep working."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_sendto = socket.socket.sendto
    original_bind = socket.socket.bind

    def connect(self: socket.socket, address: Any) -> None:
        if not _is_local_socket(self):
            _refuse()
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not _is_local_socket(self):
            _refuse()
        return original_connect_ex(self, address)

    def sendto(self: socket.socket, *args: Any) -> int:
        if not _is_local_socket(self):
            _refuse()
        return int(original_sendto(self, *args))

    def bind(self: socket.socket, address: Any) -> None:
        if not _is_local_socket(self):
            _refuse()
        original_bind(self, address)

    replacements: dict[str, Any] = {"connect": connect, "connect_ex": connect_ex, "sendto": sendto, "bind": bind}
    for name, method in replacements.items():  # typeshed's signatures are narrower than these
        setattr(socket.socket, name, method)
    socket.getaddrinfo = _refuse
    socket.gethostbyname = _refuse
    socket.gethostbyname_ex = _refuse
    socket.create_connection = _refuse


def limit_resources(seconds: float, memory_mb: int) -> list[str]:
    """CPU time, address space and file size (0: the child writes no file; a write fails
    with EFBIG rather than killing it). Returns what could not be set, for the report."""
    problems: list[str] = []
    try:
        import resource
    except ImportError:  # not on POSIX: the parent's wall clock is the only limit
        return ["resource limits are not available on this platform"]
    cpu = max(1, int(seconds) + 1)
    memory = memory_mb * 1024 * 1024
    for name, limit in (("RLIMIT_CPU", cpu), ("RLIMIT_AS", memory), ("RLIMIT_FSIZE", 0), ("RLIMIT_CORE", 0)):
        which = getattr(resource, name, None)
        if which is None:
            problems.append(f"{name} is not available")
            continue
        try:
            _soft, hard = resource.getrlimit(which)
            value = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError) as exc:
            problems.append(f"{name} not set: {exc}")
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    sys.dont_write_bytecode = True
    # tempfile probes a directory by writing to it, which no longer works; the parent made
    # TMPDIR (private and empty, removed after the run), so name it without a probe.
    import tempfile

    tempfile.tempdir = os.environ.get("TMPDIR") or tempfile.tempdir
    return problems


def private_stdout() -> int:
    """Keep the real stdout for the report and point fd 1 at stderr: whatever the user's
    code prints cannot corrupt the JSON the parent reads."""
    sys.stdout.flush()
    report_fd = os.dup(1)
    os.dup2(2, 1)
    return report_fd
