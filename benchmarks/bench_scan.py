#!/usr/bin/env python3
"""How fast is a tpucheck scan, next to the cost of merely reading and parsing the tree?

    python benchmarks/bench_scan.py TREE [--jobs 2] [--sample-naive N] [--json]

One run over one tree measures, in this order:

0. an untimed pass reading every file the scan will read, so that every measurement below
   sees a warm page cache (a cold cache would charge whichever stage ran first for the disk);
1. `discover`: tpucheck's own walk, which decides the file set for everything below;
2. `scan`: the real CLI, `python -m tpucheck scan TREE -f json -j JOBS`, in a fresh
   subprocess, then the same with `-j 1`. A subprocess because the baselines below keep a
   million lines of text and trees in this process: the scan's wall time and peak memory
   must not include them (and its forked workers must not inherit them). Its wall time is
   what a user waits for: interpreter start, imports, discovery, analysis, JSON report;
3. `read`: reading and decoding every Python file (the ones `discover` lists with kind
   "python"), counting lines as the scan does;
4. `ast.parse` of all of them, one core: the floor for any parser-based tool;
5. `libcst.parse_module` of all of them, one core: what parsing everything with the parser
   tpucheck uses costs. A scan with two workers should beat this (ratio < 1.0), which it
   can only do because the prefilter spares it files no rule could match;
6. with `--sample-naive N`: the naive design (libcst `MetadataWrapper` resolving
   `PositionProvider` and `QualifiedNameProvider` for a trivial visitor) on a deterministic
   sample of N files, extrapolated to the whole tree by its lines per second.

The parse baselines work on text already in memory, so they exclude the I/O and decoding
the scan has to do: the comparison is tilted against tpucheck, never for it.

Peak memory is `ru_maxrss` (KiB on Linux): of this process, of its children, and, per scan,
from `os.wait4` on that scan's process. `ru_maxrss` of children is the peak of the single
largest process among them (the CLI parent or one worker), not the sum of the processes
alive at once.

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
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    # Run from a checkout without installing: the baselines import tpucheck's discovery
    # and decoding so that they measure exactly the file set and text the scan sees.
    sys.path.insert(0, str(REPO_ROOT))

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider  # noqa: E402

from tpucheck.analyzers import build_context  # noqa: E402
from tpucheck.analyzers.python import MAX_BRACKET_DEPTH, bracket_depth  # noqa: E402
from tpucheck.discovery import SourceFile, discover  # noqa: E402
from tpucheck.ruleset import load_ruleset  # noqa: E402
from tpucheck.sourcetext import SourceTextError, decode  # noqa: E402


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

    @property
    def lines_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds > 0 else 0.0


@dataclass(slots=True)
class ScanRun:
    """One `tpucheck scan` subprocess: what it cost and what it reported."""

    jobs: int
    prefilter: bool
    seconds: float
    max_rss_kib: int
    files_found: int
    files_analyzed: int
    files_parsed: int
    files_errored: int
    files_skipped: int
    lines_scanned: int
    findings: int
    suppressed: int
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    error_samples: dict[str, list[str]] = field(default_factory=dict)


class BenchError(Exception):
    """Something that makes the run meaningless: one line on stderr, exit 1."""


# --------------------------------------------------------------------------- helpers


def count_lines(text: str) -> int:
    """Lines as the scan counts them (`analyze_text`): a last line without '\\n' counts."""
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


def subprocess_env() -> dict[str, str]:
    """The scan subprocess imports the same tpucheck as this script, installed or not."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("NO_COLOR", "1")
    return env


def run_measured(argv: Sequence[str]) -> tuple[float, int, int, str]:
    """Run argv; return (wall seconds, peak RSS KiB of it and its descendants, exit code, stderr).

    `os.wait4` gives the rusage of this one child including the workers it reaped, which
    `RUSAGE_CHILDREN` cannot once several scans have run.
    """
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=subprocess_env())
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return seconds, usage.ru_maxrss, proc.returncode, stderr


def sample_key(path: str) -> str:
    """A stable pseudo-random order: the same tree gives the same sample on every machine."""
    return hashlib.sha1(path.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- stages


def discover_files(tree: str, rules: Sequence[str]) -> tuple[Stage, list[SourceFile], list[SourceFile]]:
    """The scan's own file set: every file (for warming) and the Python ones."""
    context = build_context(load_ruleset(list(rules)))
    start = time.perf_counter()
    found = discover(tree, extra_globs=context.other_globs)
    seconds = time.perf_counter() - start
    python = [f for f in found.files if "python" in f.kinds]
    stage = Stage("discover", seconds, len(found.files), 0, note=f"{len(python)} Python, {len(found.skipped)} skipped")
    return stage, found.files, python


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
    start = time.perf_counter()
    for source in files:
        try:
            with open(source.abspath, "rb") as handle:
                text = decode(handle.read(), python=True)
        except (OSError, SourceTextError):
            failed += 1
            continue
        texts[source.path] = text
        lines[source.path] = count_lines(text)
    seconds = time.perf_counter() - start
    return Stage("read", seconds, len(texts), sum(lines.values()), failed, note="read + decode (PEP 263) + count"), texts, lines


def parse_ast(texts: dict[str, str], lines: dict[str, int]) -> Stage:
    failed = 0
    parsed_lines = 0
    start = time.perf_counter()
    for path, text in texts.items():
        try:
            ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            failed += 1
            continue
        parsed_lines += lines[path]
    seconds = time.perf_counter() - start
    return Stage("ast.parse", seconds, len(texts) - failed, parsed_lines, failed, note="all Python files, in memory")


def parse_libcst(texts: dict[str, str], lines: dict[str, int], too_deep: set[str]) -> tuple[Stage, dict[str, float], Counter[str]]:
    """Parse everything with libcst; per-file seconds feed the naive design's comparison.

    Files nested deeper than tpucheck's limit are skipped untimed: libcst's native parser
    can overflow its stack on them and take this process down.
    """
    per_file: dict[str, float] = {}
    failures: Counter[str] = Counter()
    cst.parse_module("pass\n")  # the native parser's first-call setup, untimed
    clock = time.perf_counter
    start = clock()
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
    seconds = clock() - start
    note = "failed: " + ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) if failures else "all Python files, in memory"
    stage = Stage("libcst.parse_module", seconds, len(per_file), sum(lines[p] for p in per_file), sum(failures.values()), note=note)
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
    failed = 0
    done_lines = 0
    done_parse = 0.0
    for path in sample:
        began = time.perf_counter()
        try:
            module = cst.parse_module(texts[path])
            MetadataWrapper(module).visit(_TrivialVisitor())
        except Exception:  # noqa: BLE001 - RecursionError and metadata failures alike
            failed += 1
            continue
        seconds += time.perf_counter() - began
        done_lines += lines[path]
        done_parse += parse_seconds[path]
    return {
        "files": len(sample) - failed,
        "failed": failed,
        "lines": done_lines,
        "seconds": seconds,
        "lines_per_second": done_lines / seconds if seconds else 0.0,
        "parse_only_seconds": done_parse,
        "overhead_vs_parse": seconds / done_parse if done_parse else 0.0,
    }


def run_scan(tree: str, jobs: int, rules: Sequence[str], prefilter: bool = True) -> ScanRun:
    with tempfile.TemporaryDirectory(prefix="bench_scan_") as scratch:
        report = os.path.join(scratch, "report.json")
        argv = [sys.executable, "-m", "tpucheck", "scan", tree, "-f", "json", "-o", report, "-j", str(jobs), "-q"]
        for extra in rules:
            argv += ["--rules", extra]
        if not prefilter:
            argv.append("--no-prefilter")
        seconds, rss, code, stderr = run_measured(argv)
        if code not in (0, 1) or not os.path.exists(report):
            last = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
            raise BenchError(f"tpucheck scan -j {jobs} exited with {code}: {last}")
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
        seconds=seconds,
        max_rss_kib=rss,
        files_found=coverage["files_found"],
        files_analyzed=coverage["files_analyzed"],
        files_parsed=coverage["files_parsed"],
        files_errored=coverage["files_errored"],
        files_skipped=coverage["files_skipped"],
        lines_scanned=coverage["lines_scanned"],
        findings=len(data["findings"]),
        suppressed=len(data["suppressed"]),
        errors_by_kind=dict(sorted(kinds.items())),
        error_samples=samples,
    )


def startup_seconds() -> float:
    """What every CLI run pays before scanning: interpreter, imports (libcst, typer, rich...)."""
    seconds, _, _, _ = run_measured([sys.executable, "-m", "tpucheck", "--version"])
    return seconds


# --------------------------------------------------------------------------- report


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def measure(args: argparse.Namespace) -> dict[str, Any]:
    tree = args.tree
    rules = list(args.rules or [])
    discovery, all_files, python_files = discover_files(tree, rules)
    warmed = warm_cache(all_files)

    startup = startup_seconds()
    scan_n = run_scan(tree, args.jobs, rules)
    scan_1 = run_scan(tree, 1, rules) if args.jobs != 1 else scan_n
    full = run_scan(tree, args.jobs, rules, prefilter=False) if args.no_prefilter else None

    read, texts, lines = read_python(python_files)
    too_deep = {p for p, t in texts.items() if bracket_depth(t) > MAX_BRACKET_DEPTH}
    ast_stage = parse_ast(texts, lines)
    cst_stage, parse_seconds, _ = parse_libcst(texts, lines, too_deep)
    naive = naive_sample(texts, lines, parse_seconds, args.sample_naive) if args.sample_naive else None

    def scan_stage(run: ScanRun, label: str) -> Stage:
        screened = run.files_analyzed - run.files_parsed
        note = f"parsed {run.files_parsed}, screened out {screened}, errors {run.files_errored}, findings {run.findings}"
        return Stage(label, run.seconds, run.files_analyzed, run.lines_scanned, run.files_errored, run.jobs, note)

    stages = [discovery, read, ast_stage, cst_stage]
    stages.append(scan_stage(scan_n, f"tpucheck scan -j {args.jobs}"))
    if scan_1 is not scan_n:
        stages.append(scan_stage(scan_1, "tpucheck scan -j 1"))
    if full is not None:
        stages.append(scan_stage(full, f"scan --no-prefilter -j {args.jobs}"))

    scans = [scan_n] + ([scan_1] if scan_1 is not scan_n else []) + ([full] if full is not None else [])
    ratios: dict[str, float | None] = {
        f"scan_j{args.jobs}_over_libcst_parse_all": _ratio(scan_n.seconds, cst_stage.seconds),
        "scan_j1_over_libcst_parse_all": _ratio(scan_1.seconds, cst_stage.seconds),
        f"scan_j{args.jobs}_over_ast_parse_all": _ratio(scan_n.seconds, ast_stage.seconds),
        f"speedup_j1_over_j{args.jobs}": _ratio(scan_1.seconds, scan_n.seconds),
        f"scan_j{args.jobs}_lines_per_second": _ratio(scan_n.lines_scanned, scan_n.seconds),
        f"scan_j{args.jobs}_python_lines_per_second": _ratio(read.lines, scan_n.seconds),
    }
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
        ratios["naive_over_scan_j1"] = _ratio(naive["extrapolated_seconds"], scan_1.seconds)

    return {
        "tree": os.path.abspath(tree),
        "machine": {
            "python": platform.python_version(),
            "libcst": getattr(cst, "__version__", None) or _dist_version("libcst"),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "rules": rules or ["built-in"],
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
            f"scan_j{args.jobs}_max_rss": scan_n.max_rss_kib,
            "scan_j1_max_rss": scan_1.max_rss_kib,
        },
    }


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - a missing version is not worth failing a benchmark
        return None


def format_table(data: dict[str, Any]) -> str:
    out = [
        f"tree: {data['tree']}",
        f"python {data['machine']['python']}, libcst {data['machine']['libcst']}, {data['machine']['cpus']} cpus; rules: {', '.join(data['rules'])}",
        f"page cache: {data['page_cache']}",
        f"{data['python_files']} Python files, {data['python_lines']:,} lines; CLI startup (python -m tpucheck --version) {data['startup_seconds']:.2f} s",
        "",
    ]
    header = ("stage", "cores", "seconds", "files", "lines", "lines/s", "failed", "note")
    rows = [
        (s["name"], str(s["cores"]), f"{s['seconds']:.2f}", f"{s['files']:,}", f"{s['lines']:,}" if s["lines"] else "-",
         f"{s['lines_per_second']:,.0f}" if s["lines"] else "-", str(s["failed"]), s["note"])
        for s in data["stages"]
    ]  # fmt: skip
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells) + "  " + row[-1])
    out += ["", "ratios:"]
    for name, value in data["ratios"].items():
        out.append(f"  {name:<40} {'n/a' if value is None else (f'{value:,.0f}' if value >= 1000 else f'{value:.3f}')}")
    out += ["", "peak RSS (ru_maxrss, MiB; children = largest single process, not a sum):"]
    for name, kib in data["memory_kib"].items():
        out.append(f"  {name:<40} {kib / 1024:.0f}")
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
    args = parser.parse_args(argv)
    if not os.path.exists(args.tree):
        print(f"bench_scan: no such file or directory: {args.tree}", file=sys.stderr)
        return 2
    if args.jobs < 1 or args.sample_naive < 0:
        print("bench_scan: --jobs must be >= 1 and --sample-naive >= 0", file=sys.stderr)
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
