"""A per-file time budget: one pathological file must not hold up a whole scan.

`time_limit(seconds)` arms a one-shot `ITIMER_REAL` whose SIGALRM handler raises
`BudgetExceeded`. That only works where Python can take signals: on POSIX, in the main
thread of a process. Worker processes run their tasks in their main thread, and so does an
in-process scan called from a program's main thread; anywhere else the limit is a no-op.

The previous SIGALRM handler and any timer already running are restored afterwards (the
latter with what remained of it), so a test runner's own timeout keeps working.

Python runs signal handlers between bytecodes, so a file is interrupted only once control
returns to Python: time spent inside libcst's native parser is not interruptible. The size
limit (`--max-file-size`) and the bracket-depth refusal bound that part; the walk, the
position pass and every pure-Python analyzer are interrupted on time.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

DEFAULT_FILE_TIME_BUDGET = 30.0
"""Seconds; far above the slowest real file measured (see README, Performance), so it only
ever stops a pathological one."""


class BudgetExceeded(BaseException):
    """Raised inside the analysis when its time is up.

    A BaseException, like KeyboardInterrupt, so that the analyzers' `except Exception`
    handlers (which turn bad input into error entries) do not swallow it.
    """


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise BudgetExceeded in the body once `seconds` of wall time have passed."""
    if seconds is None or seconds <= 0 or not available():
        yield
        return
    armed = [True]

    def expire(signum: int, frame: FrameType | None) -> None:
        if armed[0]:
            armed[0] = False
            raise BudgetExceeded

    previous = signal.signal(signal.SIGALRM, expire)
    began = time.monotonic()
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        try:
            yield
        finally:
            # Nested so that an alarm landing right here still reaches the restore below;
            # the timer is one-shot, so the restore itself cannot be interrupted by ours.
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        if outer_delay > 0:
            remaining = max(outer_delay - (time.monotonic() - began), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, remaining, outer_interval)
