"""The per-file time budget: a slow file becomes an error entry, the rest of the scan goes on."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest
from conftest import fixture_ruleset, write_tree

from tpucheck import engine
from tpucheck.analyze.budget import BudgetExceeded, time_limit
from tpucheck.analyze.cache import CACHE_DIRNAME, LAYOUT, CacheStats
from tpucheck.engine import ScanOptions, scan

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX interval timers")

FILES: dict[str, str | bytes] = {
    "pkg/slow.py": "import torch\ntorch.cuda.synchronize()\n",
    "pkg/fast.py": "import torch\ntorch.cuda.synchronize()\n",
    "pkg/other.py": "import torch\ntorch.backends.cudnn.benchmark = True\n",
}


def _slow_on(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the analysis of one file spin in Python until interrupted (bounded, in case)."""
    real = engine.analyze_text

    def analyze_text(path, kinds, text, context):  # type: ignore[no-untyped-def]
        if path.endswith(name):
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                pass
        return real(path, kinds, text, context)

    monkeypatch.setattr(engine, "analyze_text", analyze_text)


def test_slow_file_becomes_a_timeout_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = write_tree(tmp_path / "repo", FILES)
    _slow_on("slow.py", monkeypatch)
    began = time.monotonic()
    stats = CacheStats()
    result = scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1, file_time_budget=0.2, use_cache=True, cache_stats=stats))
    assert time.monotonic() - began < 4
    assert [(e.path, e.kind, e.message) for e in result.errors] == [("pkg/slow.py", "timeout", "analysis took longer than the 0.2 s budget; skipped")]
    assert sorted({f.path for f in result.findings}) == ["pkg/fast.py", "pkg/other.py"]
    assert result.coverage.files_errored == 1
    # A timeout depends on the machine and the moment: it is never cached.
    assert stats.written == 2
    stored = [json.loads(p.read_text()) for p in (tree / CACHE_DIRNAME / LAYOUT).glob("*/*/*.json")]
    assert sorted(entry["key"]["path"] for entry in stored if "result" in entry) == ["pkg/fast.py", "pkg/other.py"]


def test_budget_in_worker_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked workers inherit the patched analyzer and arm the timer in their main thread."""
    tree = write_tree(tmp_path / "repo", FILES)
    _slow_on("slow.py", monkeypatch)
    monkeypatch.setattr(engine, "INLINE_BELOW", 0)
    result = scan(str(tree), fixture_ruleset(), ScanOptions(jobs=2, file_time_budget=0.2))
    assert [(e.path, e.kind) for e in result.errors] == [("pkg/slow.py", "timeout")]
    assert sorted({f.path for f in result.findings}) == ["pkg/fast.py", "pkg/other.py"]


def test_no_budget_means_no_timer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = write_tree(tmp_path / "repo", {"pkg/fast.py": FILES["pkg/fast.py"]})
    armed: list[float] = []
    real = signal.setitimer
    monkeypatch.setattr(signal, "setitimer", lambda *args: armed.append(args[1]) or real(*args))
    assert not scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1, file_time_budget=None)).errors
    assert armed == []


def test_previous_handler_and_timer_are_restored() -> None:
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with time_limit(5):
            pass
        handler = signal.getsignal(signal.SIGALRM)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert callable(handler) and getattr(handler, "__name__", "") == "<lambda>"
        assert 0 < remaining <= 0.3
        with pytest.raises(BudgetExceeded), time_limit(0.05):
            time.sleep(1)
        deadline = time.monotonic() + 2
        while not fired and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fired == [signal.SIGALRM]  # the outer timer still went off, late but once
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_budget_is_a_no_op_off_the_main_thread() -> None:
    outcome: list[str] = []

    def body() -> None:
        with time_limit(0.01):
            time.sleep(0.05)
        outcome.append("finished")

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert outcome == ["finished"]
