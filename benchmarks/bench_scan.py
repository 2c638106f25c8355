#!/usr/bin/env python3
"""How fast is a tpucheck scan, next to the cost of merely reading and parsing the tree?

    python benchmarks/bench_scan.py TREE [--jobs 2] [--sample-naive N] [--json]
                                         [--rules PATH] [--no-prefilter] [--repeat K]

One run over one tree measures, in this order:

0. an untimed pass reading every file the scan will read, so that every measurement below
   sees a warm page cache (a cold cache would charge whichever stage ran first for the disk);
1. `discover`: tpucheck's own walk, which decides the file set for everything below;
2. `scan`: the real CLI, `python -m tpucheck scan TREE -f json -j JOBS --no-cache`, in a
   fresh subprocess, then the same with `-j 1`. A subprocess because the baselines below
   keep a million lines of text and trees in this process: the scan's wall time and peak
   memory must not include them (and its forked workers must not inherit them). Its wall
   time is what a user waits for: interpreter start, imports, discovery, analysis, JSON
   report;
2b. `cache`: the same `-j JOBS` scan with `--cache-dir` pointing at an empty scratch
   directory (cold: analyses everything and writes every entry), then again with the same
   directory and the tree unchanged (warm: every file read, hashed and served from its
   entry). The cache never lands in the tree;
3. `read`: reading and decoding every Python file (the ones `discover` lists with kind
   "python"), counting lines as the scan does;
4. `ast.parse` of all of them, one core: the floor for any parser-based tool;
5. `libcst.parse_module` of all of them, one core: what parsing everything with the parser
   tpucheck uses costs. A scan with two workers should beat this (ratio < 1.0): it has
   twice the cores and the prefilter spares it the files no rule could match, and all it
   does besides parsing (start-up, reading, the walk, positions, the report) must fit in
   what that saves;
6. with `--sample-naive N`: the naive design (libcst `MetadataWrapper` resolving
   `PositionProvider` and `QualifiedNameProvider` for a trivial visitor) on a deterministic
   sample of N files, extrapolated to the whole tree by its lines per second.

The parse baselines work on text already in memory, so they exclude the I/O and decoding
the scan has to do: the comparison is tilted against tpucheck, never for it.

Peak memory is `ru_maxrss` (KiB on Linux): of this process, of its children, and, per scan,
from `os.wait4` on that scan's process. `ru_maxrss` of children is the peak of the single
largest process among them (the CLI parent or one worker), not the sum of the processes
alive at once, so each scan's whole process tree is also sampled from /proc: the peak of
the summed RSS every 100 ms (an upper bound: pages a forked worker still shares with its
parent count twice; never below `ru_maxrss`) and of the summed PSS every 100 ms for the
first 3 s, then every 2 s (shared pages split between their users: what the scan really
costs the machine; reading it walks page tables, which is what costs the sampler).

Dependency-free beyond what tpucheck itself needs (libcst).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    # Run from a checkout without installing: the baselines import tpucheck's discovery
    # and decoding so that they measure exactly the file set and text the scan sees.
    sys.path.insert(0, str(REPO_ROOT))

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from tpucheck.analyze import build_context
from tpucheck.analyze.python.nesting import refusal
from tpucheck.discover.sourcetext import SourceTextError, decode
from tpucheck.discover.walk import SourceFile, discover
from tpucheck.ruleset import RuleFileError, load_ruleset
from tpucheck.ruleset.loader import builtin_rules_dir


@dataclass(slots=True)
class Stage:
    """One measured row of the table."""

    name: str
    seconds: float
    files: int
    lines: int
    failed: int = 0
    cores: int = 1
    note: str = ""
    others_cpu_seconds: float | None = None
    """CPU time the rest of the machine used meanwhile (from /proc/stat, 10 ms ticks)."""
    cpu_seconds: float | None = None
    """User + system CPU time. A one-core row whose CPU time falls well short of its wall
    time was measured under contention. The converse does not hold: a neighbour busy on
    the SMT sibling of our core slows it down without taking any of its CPU time."""
    seconds_all: list[float] = field(default_factory=list)
    """Every repetition's wall time (`--repeat`); `seconds` is the smallest."""

    @property
    def lines_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds > 0 else 0.0


@dataclass(slots=True)
class ScanRun:
    """One `tpucheck scan` subprocess: what it cost and what it reported."""

    jobs: int
    prefilter: bool
    seconds: float
    cpu_seconds: float
    """Of the CLI process and every worker it reaped."""
    others_cpu_seconds: float | None
    max_rss_kib: int
    """Largest single process (`ru_maxrss` from `os.wait4`)."""
    tree_rss_kib: int | None
    """Peak of the summed RSS of the scan's process and its workers (sampled; None off Linux)."""
    tree_pss_kib: int | None
    """The same with PSS: shared pages divided among the processes sharing them."""
    files_found: int
    files_analyzed: int
    files_parsed: int
    files_errored: int
    files_skipped: int
    lines_scanned: int
    findings: int
    suppressed: int
    rules: int = 0
    rules_digest: str = ""
    """Of the rule ids the scan reports having run: two scans compare only if these agree."""
    findings_digest: str = ""
    """Of every finding's fingerprint, rule and position: equal across worker counts, or a bug."""
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    error_samples: dict[str, list[str]] = field(default_factory=dict)
    seconds_all: list[float] = field(default_factory=list)
    cache: str = "off"
    """"off", "cold" (empty cache directory) or "warm" (the directory a cold run filled)."""
    cache_entries: int | None = None
    """Entries in the cache directory after the run."""


T = TypeVar("T")


class BenchError(Exception):
    """Something that makes the run meaningless: one line on stderr, exit 1."""


# --------------------------------------------------------------------------- helpers


def system_busy_seconds() -> float | None:
    """CPU time every process on the machine has used since boot (Linux /proc/stat), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    busy = sum(ticks[:8]) - ticks[3] - ticks[4]  # user..steal, less idle and iowait
    return busy / os.sysconf("SC_CLK_TCK")


class Clock:
    """Wall and CPU time of this process from creation to `elapsed()`, and the CPU time
    other processes used meanwhile: the direct measure of a busy neighbour."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()
        self.busy = system_busy_seconds()

    def elapsed(self, children_cpu: float = 0.0) -> tuple[float, float, float | None]:
        """(wall, this process's CPU, everyone else's CPU but `children_cpu`)."""
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        busy = system_busy_seconds()
        others = None if busy is None or self.busy is None else max(0.0, busy - self.busy - cpu - children_cpu)
        return wall, cpu, others


def count_lines(text: str) -> int:
    """Lines as the scan counts them (`analyze_text`): a last line without '\\n' counts."""
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


def subprocess_env() -> dict[str, str]:
    """The scan subprocess imports the same tpucheck as this script, installed or not."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("NO_COLOR", "1")
    return env


def _descendants(pid: int) -> list[int]:
    """pid and every process below it, from /proc/PID/task/TID/children (Linux 3.5+):
    far cheaper than reading every process's stat, which would cost the scan CPU."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    todo.extend(int(child) for child in handle.read().split())
            except (OSError, ValueError):
                continue
    return found


_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4


def _rss_kib(pid: int) -> int:
    """From /proc/PID/statm: cheap enough to read ten times a second."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * _PAGE_KIB
    except (OSError, ValueError, IndexError):
        return 0


def _pss_kib(pid: int) -> int:
    """From /proc/PID/smaps_rollup, which walks the page tables (~6 ms for a worker)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class TreeMemory:
    """Samples the summed RSS of a process and its descendants every `interval` seconds in
    a thread, and their summed PSS every `pss_every` samples after the first `pss_first`
    (so that a short run still gets several), keeping the peaks. This costs the scan about
    1% of one core (PSS is the expensive part, hence its lower rate)."""

    def __init__(self, pid: int, interval: float = 0.1, pss_every: int = 20, pss_first: int = 30) -> None:
        self.pid = pid
        self.interval = interval
        self.pss_every = pss_every
        self.pss_first = pss_first
        self.rss = self.pss = 0
        me = os.getpid()
        self.available = os.path.exists(f"/proc/{me}/smaps_rollup") and os.path.exists(f"/proc/{me}/task/{me}/children")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        sample = 0
        while not self._stop.is_set():
            pids = _descendants(self.pid)
            self.rss = max(self.rss, sum(map(_rss_kib, pids)))
            if sample < self.pss_first or sample % self.pss_every == 0:
                self.pss = max(self.pss, sum(map(_pss_kib, pids)))
            sample += 1
            self._stop.wait(self.interval)

    def start(self) -> None:
        if self.available:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self.available:
            self._thread.join()


@dataclass(slots=True)
class Measured:
    seconds: float
    cpu_seconds: float
    """Of the process and the descendants it reaped."""
    others_cpu_seconds: float | None
    max_rss_kib: int
    tree_rss_kib: int | None
    tree_pss_kib: int | None
    returncode: int
    stderr: str


def run_measured(argv: Sequence[str]) -> Measured:
    """Run argv and measure it. `os.wait4` gives the rusage of this one child including the
    workers it reaped, which `RUSAGE_CHILDREN` cannot once several scans have run."""
    with tempfile.TemporaryFile() as err:
        clock = Clock()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=subprocess_env())
        memory = TreeMemory(proc.pid)
        memory.start()
        try:
            # Wait without reaping: the sampler never sees the pid reused by another process.
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        finally:
            memory.stop()
        _, status, usage = os.wait4(proc.pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        seconds, _, others = clock.elapsed(children_cpu=cpu)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    # A sampled sum can miss a short peak that ru_maxrss saw; the sum is at least that peak.
    tree_rss = max(memory.rss, usage.ru_maxrss) if memory.available else None
    return Measured(seconds, cpu, others, usage.ru_maxrss, tree_rss, memory.pss if memory.available else None, proc.returncode, stderr)


def digest(items: Sequence[str]) -> str:
    return hashlib.sha1("\n".join(items).encode("utf-8")).hexdigest()[:12]


def rule_files_digest(extra: Sequence[str]) -> str:
    """Of the built-in and extra rule files' bytes: the rule base is data that may be edited
    while a run is under way, and the prefilter (hence the timing) depends on it."""
    paths: list[Path] = sorted(builtin_rules_dir().glob("*.yaml"))
    for item in map(Path, extra):
        paths += sorted(item.rglob("*.y*ml")) if item.is_dir() else [item]
    hasher = hashlib.sha1()
    for path in paths:
        hasher.update(str(path).encode("utf-8") + b"\0")
        try:
            hasher.update(path.read_bytes())
        except OSError:
            hasher.update(b"<unreadable>")
    return hasher.hexdigest()[:12]


def sample_key(path: str) -> str:
    """A stable pseudo-random order: the same tree gives the same sample on every machine."""
    return hashlib.sha1(path.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- stages


def discover_files(tree: str, rules: Sequence[str]) -> tuple[Stage, list[SourceFile], list[SourceFile], str]:
    """The scan's own file set: every file (for warming) and the Python ones."""
    try:
        ruleset = load_ruleset(list(rules))
    except RuleFileError as exc:
        raise BenchError(f"invalid rule file: {exc}") from None
    context = build_context(ruleset)
    described = f"{len(ruleset.rules)} rules, {len(context.python.needles)} prefilter needles"
    clock = Clock()
    found = discover(tree, extra_globs=context.other_globs)
    seconds, cpu, others = clock.elapsed()
    python = [f for f in found.files if "python" in f.kinds]
    stage = Stage("discover", seconds, len(found.files), 0, note=f"{len(python)} Python, {len(found.skipped)} skipped", others_cpu_seconds=others, cpu_seconds=cpu)
    return stage, found.files, python, described


def warm_cache(files: Sequence[SourceFile]) -> int:
    """Untimed: read every file once so no stage pays for the disk."""
    total = 0
    for source in files:
        try:
            with open(source.abspath, "rb") as handle:
                total += len(handle.read())
        except OSError:
            pass
    return total


def read_python(files: Sequence[SourceFile]) -> tuple[Stage, dict[str, str], dict[str, int]]:
    texts: dict[str, str] = {}
    lines: dict[str, int] = {}
    failed = 0
    clock = Clock()
    for source in files:
        try:
            with open(source.abspath, "rb") as handle:
                text = decode(handle.read(), python=True)
        except (OSError, SourceTextError):
            failed += 1
            continue
        texts[source.path] = text
        lines[source.path] = count_lines(text)
    seconds, cpu, others = clock.elapsed()
    stage = Stage("read", seconds, len(texts), sum(lines.values()), failed, note="read + decode (PEP 263) + count", others_cpu_seconds=others, cpu_seconds=cpu)
    return stage, texts, lines


def parse_ast(texts: dict[str, str], lines: dict[str, int]) -> Stage:
    failed = 0
    parsed_lines = 0
    clock = Clock()
    for path, text in texts.items():
        try:
            ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            failed += 1
            continue
        parsed_lines += lines[path]
    seconds, cpu, others = clock.elapsed()
    return Stage("ast.parse", seconds, len(texts) - failed, parsed_lines, failed, note="all Python files, in memory", others_cpu_seconds=others, cpu_seconds=cpu)


def parse_libcst(texts: dict[str, str], lines: dict[str, int], too_deep: set[str]) -> tuple[Stage, dict[str, float], Counter[str]]:
    """Parse everything with libcst; per-file seconds feed the naive design's comparison.

    Files nested deeper than tpucheck's limit are skipped untimed: libcst's native parser
    can overflow its stack on them and take this process down.
    """
    per_file: dict[str, float] = {}
    failures: Counter[str] = Counter()
    cst.parse_module("pass\n")  # the native parser's first-call setup, untimed
    clock = time.perf_counter
    total = Clock()
    for path, text in texts.items():
        if path in too_deep:
            failures["too-deep"] += 1
            continue
        began = clock()
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError:
            failures["syntax-error"] += 1
            continue
        except RecursionError:
            failures["recursion"] += 1
            continue
        except BaseException as exc:  # pyo3's PanicException derives from BaseException
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            failures[type(exc).__name__] += 1
            continue
        per_file[path] = clock() - began
    seconds, cpu, others = total.elapsed()
    note = "failed: " + ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) if failures else "all Python files, in memory"
    stage = Stage("libcst.parse_module", seconds, len(per_file), sum(lines[p] for p in per_file), sum(failures.values()), note=note, others_cpu_seconds=others, cpu_seconds=cpu)
    return stage, per_file, failures


class _TrivialVisitor(cst.CSTVisitor):
    """The least a metadata-based rule engine does: ask both providers about every call."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.get_metadata(PositionProvider, node)
        self.get_metadata(QualifiedNameProvider, node, None)
        self.calls += 1


def naive_sample(texts: dict[str, str], lines: dict[str, int], parse_seconds: dict[str, float], n: int) -> dict[str, Any]:
    """The naive design on N files libcst could parse, chosen by a hash of their path."""
    sample = sorted(parse_seconds, key=sample_key)[:n]
    MetadataWrapper(cst.parse_module("import os\nos.f()\n")).visit(_TrivialVisitor())  # imports and caches, untimed
    seconds = 0.0
    cpu = 0.0
    failed = 0
    done_lines = 0
    done_parse = 0.0
    for path in sample:
        clock = Clock()
        try:
            module = cst.parse_module(texts[path])
            MetadataWrapper(module).visit(_TrivialVisitor())
        except Exception:
            failed += 1
            continue
        wall, used, _ = clock.elapsed()
        seconds += wall
        cpu += used
        done_lines += lines[path]
        done_parse += parse_seconds[path]
    return {
        "files": len(sample) - failed,
        "failed": failed,
        "lines": done_lines,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "lines_per_second": done_lines / seconds if seconds else 0.0,
        "parse_only_seconds": done_parse,
        "overhead_vs_parse": seconds / done_parse if done_parse else 0.0,
    }


def count_entries(cache_dir: str) -> int:
    return sum(name.endswith(".json") for _, _, names in os.walk(cache_dir) for name in names)


def run_scan(tree: str, jobs: int, rules: Sequence[str], prefilter: bool = True, cache_dir: str | None = None, cache: str = "off") -> ScanRun:
    """One CLI scan. Without `cache_dir` the cache is off (`--no-cache`): a benchmark must
    neither write into the tree it measures nor be served by a cache an earlier run left."""
    with tempfile.TemporaryDirectory(prefix="bench_scan_") as scratch:
        report = os.path.join(scratch, "report.json")
        argv = [sys.executable, "-m", "tpucheck", "scan", tree, "-f", "json", "-o", report, "-j", str(jobs), "-q"]
        argv += ["--no-cache"] if cache_dir is None else ["--cache-dir", cache_dir]
        for extra in rules:
            argv += ["--rules", extra]
        if not prefilter:
            argv.append("--no-prefilter")
        run = run_measured(argv)
        if run.returncode not in (0, 1) or not os.path.exists(report):
            last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "no output"
            raise BenchError(f"tpucheck scan -j {jobs} exited with {run.returncode}: {last}")
        with open(report, encoding="utf-8") as handle:
            data = json.load(handle)
    coverage = data["coverage"]
    kinds: Counter[str] = Counter(e["kind"] for e in data["errors"])
    samples: dict[str, list[str]] = {}
    for error in data["errors"]:
        bucket = samples.setdefault(error["kind"], [])
        if len(bucket) < 3:
            bucket.append(f"{error['path']}: {error['message']}")
    return ScanRun(
        jobs=jobs,
        prefilter=prefilter,
        seconds=run.seconds,
        cpu_seconds=run.cpu_seconds,
        others_cpu_seconds=run.others_cpu_seconds,
        max_rss_kib=run.max_rss_kib,
        tree_rss_kib=run.tree_rss_kib,
        tree_pss_kib=run.tree_pss_kib,
        files_found=coverage["files_found"],
        files_analyzed=coverage["files_analyzed"],
        files_parsed=coverage["files_parsed"],
        files_errored=coverage["files_errored"],
        files_skipped=coverage["files_skipped"],
        lines_scanned=coverage["lines_scanned"],
        findings=len(data["findings"]),
        suppressed=len(data["suppressed"]),
        rules=len(data["rules"]),
        rules_digest=digest(data["rules"]),
        findings_digest=digest(sorted(f"{f['fingerprint']} {f['rule']} {f['path']}:{f['line']}:{f['column']}" for f in data["findings"])),
        errors_by_kind=dict(sorted(kinds.items())),
        error_samples=samples,
        cache=cache,
        cache_entries=count_entries(cache_dir) if cache_dir is not None else None,
    )


def best_of(repeat: int, measure_once: Callable[[], T], seconds: Callable[[T], float]) -> tuple[T, list[T]]:
    """The fastest of `repeat` runs, and all of them: on a shared machine noise only ever
    adds time, so the minimum is the least disturbed estimate."""
    runs = [measure_once() for _ in range(repeat)]
    return min(runs, key=seconds), runs


def startup_seconds() -> float:
    """What every CLI run pays before scanning: interpreter and imports (typer; the scan,
    libcst and the reports are imported when used)."""
    return run_measured([sys.executable, "-m", "tpucheck", "--version"]).seconds


# --------------------------------------------------------------------------- peers

SEMGREP_RULE = """rules:
  - id: cuda-synchronize
    languages: [python]
    severity: WARNING
    message: torch.cuda.synchronize() has no TPU counterpart
    pattern: torch.cuda.synchronize(...)
"""
"""One rule, the equivalent of tpucheck's CA001: semgrep's cost is mostly per file and
per rule, so a one-rule run is its floor on the tree."""


def peer_tool(name: str) -> str | None:
    """A peer's executable: beside this interpreter (the same virtualenv) first, then PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def peer_stages(tree: str, jobs: int, repeat: int, python_files: int, python_lines: int) -> list[Stage]:
    """ruff (its default rules) and semgrep (one rule) over the same tree, when installed:
    not what tpucheck does, but what a team already runs in CI, for scale."""
    stages = []
    ruff = peer_tool("ruff")
    if ruff is not None:
        argv = [ruff, "check", tree, "--isolated", "--no-cache", "--exit-zero", "--quiet", "--output-format", "concise"]
        stages.append(_peer_stage("ruff check (default rules)", argv, repeat, python_files, python_lines, 0, _version(ruff)))
    semgrep = peer_tool("semgrep")
    if semgrep is not None:
        with tempfile.TemporaryDirectory(prefix="bench_scan_semgrep_") as scratch:
            rule = os.path.join(scratch, "rule.yaml")
            with open(rule, "w", encoding="utf-8") as handle:
                handle.write(SEMGREP_RULE)
            argv = [semgrep, "scan", "--config", rule, "--metrics", "off", "--disable-version-check", "--quiet", "--json",
                    "--output", os.path.join(scratch, "out.json"), "--jobs", str(jobs), tree]  # fmt: skip
            stages.append(_peer_stage(f"semgrep scan -j {jobs} (1 rule)", argv, repeat, python_files, python_lines, jobs, _version(semgrep)))
    return stages


def _peer_stage(label: str, argv: list[str], repeat: int, files: int, lines: int, cores: int, version: str) -> Stage:
    runs = [run_measured(argv) for _ in range(repeat)]
    best = min(runs, key=lambda run: run.seconds)
    failed = sum(run.returncode != 0 for run in runs)
    note = f"{version}; exit codes {sorted({run.returncode for run in runs})}" if failed else version
    stage = Stage(label, best.seconds, files, lines, failed, cores or os.cpu_count() or 1, note, best.others_cpu_seconds, best.cpu_seconds)
    stage.seconds_all = [run.seconds for run in runs]
    return stage


def _version(executable: str) -> str:
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return "version unknown"
    return (done.stdout.strip() or done.stderr.strip()).splitlines()[-1] if (done.stdout or done.stderr).strip() else "version unknown"


# --------------------------------------------------------------------------- report


def contended(stage: Stage) -> bool:
    """Other processes used more than 5% of a core on average while this row ran, or a
    one-core row got less than 90% of its core (when /proc/stat is not there)."""
    if stage.seconds < 2:
        return False
    if stage.others_cpu_seconds is not None:
        return stage.others_cpu_seconds > 0.05 * stage.seconds
    return stage.cores == 1 and stage.cpu_seconds is not None and stage.cpu_seconds < 0.9 * stage.seconds


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def measure(args: argparse.Namespace) -> dict[str, Any]:
    tree = args.tree
    rules = list(args.rules or [])
    # Before this process grows: a child forked later is charged the parent's RSS in
    # ru_maxrss, and platform.platform() forks `uname -p`.
    machine = {
        "python": platform.python_version(),
        "libcst": _dist_version("libcst"),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_average_at_start": round(os.getloadavg()[0], 2),
    }
    rules_before = rule_files_digest(rules)
    discovery, all_files, python_files, rules_described = discover_files(tree, rules)
    warmed = warm_cache(all_files)

    startup = startup_seconds()
    repeat = args.repeat
    every_scan: list[ScanRun] = []

    def keep(runs: list[ScanRun]) -> ScanRun:
        best = min(runs, key=lambda run: run.seconds)
        best.seconds_all = [r.seconds for r in runs]
        best.max_rss_kib = max(r.max_rss_kib for r in runs)
        best.tree_rss_kib = max((r.tree_rss_kib for r in runs if r.tree_rss_kib is not None), default=None)
        best.tree_pss_kib = max((r.tree_pss_kib for r in runs if r.tree_pss_kib is not None), default=None)
        every_scan.extend(runs)
        return best

    def scans_of(jobs: int, prefilter: bool = True) -> ScanRun:
        return keep([run_scan(tree, jobs, rules, prefilter) for _ in range(repeat)])

    scan_n = scans_of(args.jobs)
    scan_1 = scans_of(1) if args.jobs != 1 and not args.skip_single else scan_n
    full = scans_of(args.jobs, prefilter=False) if args.no_prefilter else None
    cold: ScanRun | None = None
    warm: ScanRun | None = None
    if not args.skip_cache:
        with tempfile.TemporaryDirectory(prefix="bench_scan_cache_") as scratch:
            colds = []
            for index in range(repeat):
                cache_dir = os.path.join(scratch, str(index))  # empty for every cold run
                colds.append(run_scan(tree, args.jobs, rules, cache_dir=cache_dir, cache="cold"))
            cold = keep(colds)
            warm = keep([run_scan(tree, args.jobs, rules, cache_dir=cache_dir, cache="warm") for _ in range(repeat)])

    read, texts, lines = read_python(python_files)
    too_deep = {p for p, t in texts.items() if refusal(t) is not None}
    ast_stage, ast_runs = best_of(repeat, lambda: parse_ast(texts, lines), lambda stage: stage.seconds)
    ast_stage.seconds_all = [r.seconds for r in ast_runs]
    (cst_stage, parse_seconds, _), cst_runs = best_of(repeat, lambda: parse_libcst(texts, lines, too_deep), lambda run: run[0].seconds)
    cst_stage.seconds_all = [r[0].seconds for r in cst_runs]
    naive = naive_sample(texts, lines, parse_seconds, args.sample_naive) if args.sample_naive else None
    slowest_path = max(parse_seconds, key=parse_seconds.__getitem__, default=None)
    slowest = None if slowest_path is None else {"path": slowest_path, "seconds": parse_seconds[slowest_path], "lines": lines[slowest_path]}

    def scan_stage(run: ScanRun, label: str, extra: str = "") -> Stage:
        screened = run.files_analyzed - run.files_parsed
        note = f"parsed {run.files_parsed}, screened out {screened}, errors {run.files_errored}, findings {run.findings}{extra}"
        return Stage(label, run.seconds, run.files_analyzed, run.lines_scanned, run.files_errored, run.jobs, note, run.others_cpu_seconds, run.cpu_seconds, run.seconds_all)

    stages = [discovery, read, ast_stage, cst_stage]
    stages.append(scan_stage(scan_n, f"tpucheck scan -j {args.jobs}"))
    if scan_1 is not scan_n:
        stages.append(scan_stage(scan_1, "tpucheck scan -j 1"))
    if full is not None:
        stages.append(scan_stage(full, f"scan --no-prefilter -j {args.jobs}"))
    if cold is not None and warm is not None:
        stages.append(scan_stage(cold, f"scan -j {args.jobs}, empty cache", f"; wrote {cold.cache_entries} entries"))
        stages.append(scan_stage(warm, f"scan -j {args.jobs}, warm cache", ""))

    scans = [scan_n] + ([scan_1] if scan_1 is not scan_n else []) + ([full] if full is not None else [])
    scans += [run for run in (cold, warm) if run is not None]
    ratios: dict[str, float | None] = {
        f"scan_j{args.jobs}_over_libcst_parse_all": _ratio(scan_n.seconds, cst_stage.seconds),
        f"scan_j{args.jobs}_cpu_over_libcst_parse_cpu": _ratio(scan_n.cpu_seconds, cst_stage.cpu_seconds or 0.0),
        f"scan_j{args.jobs}_over_ast_parse_all": _ratio(scan_n.seconds, ast_stage.seconds),
        f"scan_j{args.jobs}_lines_per_second": _ratio(scan_n.lines_scanned, scan_n.seconds),
        f"scan_j{args.jobs}_python_lines_per_second": _ratio(read.lines, scan_n.seconds),
    }
    if scan_1 is not scan_n:
        ratios["scan_j1_over_libcst_parse_all"] = _ratio(scan_1.seconds, cst_stage.seconds)
        ratios[f"speedup_j1_over_j{args.jobs}"] = _ratio(scan_1.seconds, scan_n.seconds)
    if cold is not None and warm is not None:
        ratios[f"warm_over_cold_scan_j{args.jobs}"] = _ratio(warm.seconds, scan_n.seconds)
        ratios[f"warm_over_cold_cache_j{args.jobs}"] = _ratio(warm.seconds, cold.seconds)
        ratios[f"cold_cache_over_scan_j{args.jobs}"] = _ratio(cold.seconds, scan_n.seconds)
    if naive is not None and naive["lines_per_second"]:
        naive["extrapolated_seconds"] = read.lines / naive["lines_per_second"]
        stages.append(
            Stage(
                "naive (extrapolated)",
                naive["extrapolated_seconds"],
                len(texts),
                read.lines,
                cores=1,
                note=f"from {naive['files']} files / {naive['lines']} lines; {naive['overhead_vs_parse']:.1f}x their parse",
            )
        )
        ratios[f"naive_over_scan_j{args.jobs}"] = _ratio(naive["extrapolated_seconds"], scan_n.seconds)
        if scan_1 is not scan_n:
            ratios["naive_over_scan_j1"] = _ratio(naive["extrapolated_seconds"], scan_1.seconds)
    for peer in [] if args.skip_peers else peer_stages(tree, args.jobs, repeat, len(python_files), read.lines):
        stages.append(peer)
        key = peer.name.split()[0]
        ratios[f"scan_j{args.jobs}_over_{key}"] = _ratio(scan_n.seconds, peer.seconds)
        if cold is not None and warm is not None:
            ratios[f"warm_scan_j{args.jobs}_over_{key}"] = _ratio(warm.seconds, peer.seconds)

    rules_after = rule_files_digest(rules)
    checks = {
        "rule_files_unchanged": rules_before == rules_after,
        "same_rules_all_scans": len({r.rules_digest for r in every_scan}) == 1,
        "same_findings_all_scans": len({r.findings_digest for r in every_scan}) == 1,
        "contended": [s.name for s in stages if contended(s)],
    }
    return {
        "tree": os.path.abspath(tree),
        "machine": machine,
        "rules": (rules or ["built-in"]) + [rules_described],
        "rule_files_digest": rules_before if checks["rule_files_unchanged"] else f"{rules_before} -> {rules_after}",
        "checks": checks,
        "repeat": repeat,
        "page_cache": f"warm: {len(all_files)} files ({warmed / 1e6:.1f} MB) read once, untimed, before any measurement",
        "python_files": len(python_files),
        "python_lines": read.lines,
        "too_deep_files": len(too_deep),
        "startup_seconds": startup,
        "stages": [asdict(s) | {"lines_per_second": s.lines_per_second} for s in stages],
        "scans": [asdict(r) for r in scans],
        "naive": naive,
        "ratios": ratios,
        "memory_kib": {
            "self_max_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "children_max_rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
            **{
                f"{name}_{kind}": value
                for name, run in scan_names(scans, args.jobs)
                for kind, value in (("max_rss", run.max_rss_kib), ("total_rss", run.tree_rss_kib), ("total_pss", run.tree_pss_kib))
                if value is not None
            },
        },
        "slowest_parse": slowest,
    }


def scan_names(scans: Sequence[ScanRun], jobs: int) -> list[tuple[str, ScanRun]]:
    """Labels for the memory table: scan_j2, scan_j1, scan_j2_no_prefilter, scan_j2_cold_cache..."""
    out = []
    for run in scans:
        name = f"scan_j{run.jobs}" + ("" if run.prefilter else "_no_prefilter") + ("" if run.cache == "off" else f"_{run.cache}_cache")
        out.append((name, run))
    return out


def _dist_version(name: str) -> str | None:
    """libcst has no __version__ attribute."""
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def format_table(data: dict[str, Any]) -> str:
    out = [
        f"tree: {data['tree']}",
        f"python {data['machine']['python']}, libcst {data['machine']['libcst']}, {data['machine']['cpus']} cpus, load average {data['machine']['load_average_at_start']} at start",
        f"rules: {', '.join(data['rules'])} (files digest {data['rule_files_digest']})",
        f"page cache: {data['page_cache']}",
        *([f"seconds: fastest of {data['repeat']} runs of each scan and parse baseline (all runs in the notes)"] if data["repeat"] > 1 else []),
        f"{data['python_files']} Python files, {data['python_lines']:,} lines; CLI startup (python -m tpucheck --version) {data['startup_seconds']:.2f} s",
        "",
    ]
    header = ("stage", "cores", "seconds", "cpu s", "others", "files", "lines", "lines/s", "failed", "note")
    rows = [
        (s["name"], str(s["cores"]), f"{s['seconds']:.2f}", "-" if s["cpu_seconds"] is None else f"{s['cpu_seconds']:.2f}",
         "-" if s["others_cpu_seconds"] is None else f"{s['others_cpu_seconds']:.2f}", f"{s['files']:,}", f"{s['lines']:,}" if s["lines"] else "-",
         f"{s['lines_per_second']:,.0f}" if s["lines"] else "-", str(s["failed"]),
         s["note"] + (f"; runs {', '.join(f'{x:.2f}' for x in s['seconds_all'])}" if len(s["seconds_all"]) > 1 else ""))
        for s in data["stages"]
    ]  # fmt: skip
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells) + "  " + row[-1])
    checks = data["checks"]
    if checks["contended"]:
        out += ["", "WARNING: CPU contention (other processes used over 5% of a core meanwhile): " + ", ".join(checks["contended"])]
    same_findings = "yes" if checks["same_findings_all_scans"] else "NO"
    out += ["", (f"checks: rule files unchanged during the run: {'yes' if checks['rule_files_unchanged'] else 'NO'}; "
                 f"same rule ids in every scan: {'yes' if checks['same_rules_all_scans'] else 'NO'}; same findings in every scan: {same_findings}")]  # fmt: skip
    if not checks["rule_files_unchanged"]:
        out.append("WARNING: the rule files changed during the run: the scans may not be comparable")
    elif not checks["same_findings_all_scans"]:
        out.append("WARNING: same rules, different findings: the worker count changes the results (a bug)")
    out += ["", "ratios:"]
    for name, value in data["ratios"].items():
        out.append(f"  {name:<40} {'n/a' if value is None else (f'{value:,.0f}' if value >= 1000 else f'{value:.3f}')}")
    out += [
        "",
        "peak memory, MiB (max_rss: ru_maxrss of the largest single process; total_rss / total_pss:",
        "the scan's processes summed, sampled (see benchmarks/README.md); self/children: this script and its largest child):",
    ]
    for name, kib in data["memory_kib"].items():
        out.append(f"  {name:<40} {kib / 1024:.0f}")
    if data.get("slowest_parse"):
        slow = data["slowest_parse"]
        out += ["", f"slowest file to parse with libcst: {slow['path']} ({slow['lines']:,} lines, {slow['seconds']:.2f} s)"]
    for run in data["scans"]:
        if run["errors_by_kind"]:
            label = f"-j {run['jobs']}" + ("" if run["prefilter"] else " --no-prefilter")
            out += ["", f"scan {label} errors by kind: " + ", ".join(f"{k} {v}" for k, v in run["errors_by_kind"].items())]
            for kind, samples in run["error_samples"].items():
                out += [f"  {kind}: {s}" for s in samples]
            break
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", help="directory (or file) to benchmark on")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="workers for the main scan (default 2; a -j 1 scan is always run too)")
    parser.add_argument("--sample-naive", type=int, default=0, metavar="N", help="time the naive metadata design on N sampled files")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    parser.add_argument("--rules", action="append", metavar="PATH", help="extra rule file/directory, passed to the scan (repeatable)")
    parser.add_argument("--no-prefilter", action="store_true", help="also time a scan that parses every Python file")
    parser.add_argument("--repeat", type=int, default=1, metavar="K", help="run each scan and parse baseline K times and keep the fastest (default 1)")
    parser.add_argument("--skip-cache", action="store_true", help="leave out the cold-cache and warm-cache scans")
    parser.add_argument("--skip-single", action="store_true", help="leave out the one-worker scan")
    parser.add_argument("--skip-peers", action="store_true", help="leave out ruff and semgrep even when installed")
    args = parser.parse_args(argv)
    if not os.path.exists(args.tree):
        print(f"bench_scan: no such file or directory: {args.tree}", file=sys.stderr)
        return 2
    if args.jobs < 1 or args.sample_naive < 0 or args.repeat < 1:
        print("bench_scan: --jobs and --repeat must be >= 1, --sample-naive >= 0", file=sys.stderr)
        return 2
    try:
        data = measure(args)
    except BenchError as exc:
        print(f"bench_scan: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(data, indent=2) if args.json else format_table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
