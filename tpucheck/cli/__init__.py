"""The command line: parses, calls, exits. Exit codes: 0 the gate passed, 1 it failed,
2 usage or configuration error, 3 a bug in tpucheck (with its traceback)."""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer
import typer.core

from tpucheck import __version__
from tpucheck.cli.usage import ReadableCommand
from tpucheck.config.formats import FORMAT_NAMES
from tpucheck.findings import CATEGORIES, SEVERITIES, ScanError, severity_rank
from tpucheck.report.options import DEFAULT_MAX_FINDINGS, STEP_SUMMARY_LIMIT, ReportOptions, terminal_width

if TYPE_CHECKING:  # the scan, the rules and the reports are imported by the commands that
    # use them: `tpucheck --version` and `--help` load typer and little else
    from tpucheck.config.settings import Settings
    from tpucheck.result import ScanResult
    from tpucheck.ruleset.model import Rule, Ruleset

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_BUG = 0, 1, 2, 3


app = typer.Typer(
    name="tpucheck",
    help="How ready is this PyTorch codebase to move from CUDA GPUs to TPUs?",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class UsageProblem(Exception):
    """A mistake in how tpucheck was called: one line on stderr, exit 2."""


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(part.strip() for value in values or [] for part in value.split(",") if part.strip())


def _load_rules(rules: list[Path] | None, select: list[str] | None, ignore: list[str] | None) -> Ruleset:
    """Strict loading, for the commands that describe rules: any problem is a usage error."""
    from tpucheck.ruleset import RuleFileError, SelectionError, load_ruleset, select_rules

    try:
        ruleset = load_ruleset(rules or [])
        return select_rules(ruleset, _split(select), _split(ignore))
    except RuleFileError as exc:
        more = f" (and {len(exc.problems) - 1} more problems)" if len(exc.problems) > 1 else ""
        raise UsageProblem(f"invalid rule file: {exc}{more}") from None
    except SelectionError as exc:
        raise UsageProblem(str(exc)) from None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tpucheck {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """tpucheck reads a PyTorch codebase, never runs it, and scores its TPU readiness."""


@app.command("scan", cls=ReadableCommand, short_help="Scan a tree: inventory, score, plan, findings; gate CI.")
def scan_command(
    paths: list[Path] | None = typer.Argument(None, metavar="PATH", help="A directory to scan (default: the current one), or files and directories (as pre-commit passes them).", show_default=False),
    output_format: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT", help=f"Report format: {', '.join(FORMAT_NAMES)} (default: terminal)."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to this file instead of stdout."),
    fail_under: float | None = typer.Option(None, "--fail-under", metavar="SCORE", help="Exit 1 when the score is below this (0-100)."),
    fail_on: str | None = typer.Option(None, "--fail-on", metavar="SEVERITY", help=f"Exit 1 on any new finding at or above this severity: {', '.join(SEVERITIES)}."),
    target: str | None = typer.Option(None, "--target", "-t", metavar="TARGET", help="Judge against torchtpu (PyTorch's native tpu device, default) or xla (PyTorch/XLA)."),
    select: list[str] | None = typer.Option(None, "--select", metavar="RULES", help="Only these rules: ids, id prefixes, names or categories (comma-separated or repeated)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULES", help="Leave out these rules: ids, id prefixes, names or categories."),
    exclude: list[str] | None = typer.Option(None, "--exclude", metavar="GLOB", help="gitignore-style glob of paths to leave out (repeatable)."),
    rules: list[Path] | None = typer.Option(None, "--rules", metavar="FILE|DIR", help="Extra rule file or directory of rule files (repeatable; adds to extend-rules)."),
    config_file: Path | None = typer.Option(None, "--config", metavar="FILE", help="Read settings from this file instead of the nearest tpucheck.toml / pyproject.toml."),
    isolated: bool = typer.Option(False, "--isolated", help="Ignore every configuration file."),
    baseline: Path | None = typer.Option(None, "--baseline", metavar="FILE", help="Findings recorded in this baseline are reported as baselined and left out of --fail-on."),
    write_baseline: Path | None = typer.Option(None, "--write-baseline", metavar="FILE", help="Record today's findings in this baseline file (and treat them as baselined)."),
    diff_base: str | None = typer.Option(None, "--diff-base", metavar="REF", help="Gate only on findings in lines changed since the merge base of REF and HEAD (git)."),
    trace: Path | None = typer.Option(None, "--trace", metavar="FILE", help="A `tpucheck trace -f json` report: mark findings the run confirmed, add what only the run saw."),
    shard: str | None = typer.Option(None, "--shard", metavar="K/N", help="Analyze only the K-th of N stable shares of the files; combine with `tpucheck merge`."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", metavar="DIR", help="Where to keep per-file results (default: .tpucheck_cache in the scanned root)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache."),
    file_time_budget: float | None = typer.Option(None, "--file-time-budget", min=0.001, metavar="SECONDS", help="Seconds one file may take before it is reported as an error (default 30)."),
    no_gitignore: bool = typer.Option(False, "--no-gitignore", help="Scan files that .gitignore excludes too."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, metavar="N", help="Worker processes (default: all cores)."),
    max_file_size: int | None = typer.Option(None, "--max-file-size", min=1, metavar="BYTES", help="Skip files larger than this many bytes (default 5 MiB)."),
    no_prefilter: bool = typer.Option(False, "--no-prefilter", help="Parse every Python file whole, with neither prefilter nor screen (the same findings, slower)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, no notes on stderr."),
    show_all: bool = typer.Option(False, "--show-all", help="List every finding in the terminal report (default: the first 40)."),
    max_findings: int | None = typer.Option(None, "--max-findings", min=0, metavar="N", help="List at most N findings in the terminal report."),
    statistics: bool = typer.Option(False, "--statistics", help="A count of findings per rule instead of the findings list (terminal report)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Each finding with its message and code, each plan step with its fix (terminal report)."),
    show_source: bool = typer.Option(False, "--show-source", help="Show the source lines around each finding in the terminal report."),
    step_summary: bool = typer.Option(False, "--step-summary", help="Size Markdown for $GITHUB_STEP_SUMMARY (1 MiB) instead of a PR comment (65,536 characters)."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Pass when there is no file to analyze (default: exit 2, as a mistyped path would give)."),
) -> None:
    """Scan a tree and report its TPU readiness; with --fail-under/--fail-on, gate CI.

    \b
    Examples:
      tpucheck scan                              the current folder
      tpucheck scan ./repo --fail-under 80       exit 1 below a score of 80
      tpucheck scan . -f html -o report.html     one page for people
    """
    from tpucheck.analyze.cache import CacheStats
    from tpucheck.api import load_settings, scan_root
    from tpucheck.config.settings import Flags

    paths = paths or [Path(".")]
    for path in paths:
        if not os.path.lexists(path):
            raise UsageProblem(f"no such file or directory: {path}")
    root, only = scan_root([str(p) for p in paths])
    if trace is not None:
        from tpucheck.trace.report import TraceReportError, load_report

        try:
            load_report(trace)
        except TraceReportError as exc:
            raise UsageProblem(str(exc)) from None
    flags = Flags(
        output_format=output_format, fail_under=fail_under, fail_on=fail_on, target=target, trace=trace,
        select=_split(select), ignore=_split(ignore), exclude=tuple(exclude or ()), rules=tuple(rules or ()),
        jobs=jobs, max_file_size=max_file_size, file_time_budget=file_time_budget,
        baseline=baseline, write_baseline=write_baseline, diff_base=diff_base, shard=_parse_shard(shard),
        cache_dir=cache_dir, no_cache=no_cache, no_gitignore=no_gitignore, no_prefilter=no_prefilter,
    )  # fmt: skip
    settings = replace(load_settings(root, flags, config_file=config_file, isolated=isolated), cache_stats=CacheStats())
    result = _run_scan(root, settings, only, show_progress=not quiet and sys.stderr.isatty())
    if not allow_empty and settings.shard is None and result.coverage.files_analyzed == 0:
        raise UsageProblem(_nothing_to_analyze([str(p) for p in paths], result))
    if not quiet:
        _notes(settings)
    report = ReportOptions(
        max_findings=None if show_all else (max_findings if max_findings is not None else DEFAULT_MAX_FINDINGS),
        statistics=statistics,
        show_source=show_source,
        verbose=verbose,
        size_limit=STEP_SUMMARY_LIMIT if step_summary else None,
    )
    _emit(result, settings.output_format, output, report)
    _report_problems(result.configuration_errors)
    score_gate = settings.fail_under
    if settings.shard is not None and score_gate is not None:
        if not quiet:
            typer.echo("tpucheck: note: a shard's score is not the tree's; apply --fail-under to `tpucheck merge`", err=True)
        score_gate = None
    code = _gate(result, score_gate, settings.fail_on)
    raise typer.Exit(EXIT_USAGE if result.configuration_errors else code)


@app.command("fix", cls=ReadableCommand, short_help="Apply codemods: device-agnostic code that keeps the GPU path.")
def fix_command(
    paths: list[Path] | None = typer.Argument(None, metavar="PATH", help="A directory to fix (default: the current one), or files and directories.", show_default=False),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff and write nothing; exit 1 when there is something to fix, 0 when not."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply the fixes that may change numerics or behaviour (each is listed with its reason without this flag), and raise a torch pin that holds fixes back."),
    target: str | None = typer.Option(None, "--target", "-t", metavar="TARGET", help="Judge against torchtpu (default) or xla, as `scan` does."),
    select: list[str] | None = typer.Option(None, "--select", metavar="RULES", help="Only fix these rules: ids, id prefixes, names or categories."),
    ignore: list[str] | None = typer.Option(None, "--ignore", metavar="RULES", help="Leave these rules' findings alone."),
    exclude: list[str] | None = typer.Option(None, "--exclude", metavar="GLOB", help="gitignore-style glob of paths to leave out (repeatable)."),
    rules: list[Path] | None = typer.Option(None, "--rules", metavar="FILE|DIR", help="Extra rule file or directory of rule files (repeatable)."),
    config_file: Path | None = typer.Option(None, "--config", metavar="FILE", help="Read settings from this file instead of the nearest tpucheck.toml / pyproject.toml."),
    isolated: bool = typer.Option(False, "--isolated", help="Ignore every configuration file."),
    baseline: Path | None = typer.Option(None, "--baseline", metavar="FILE", help="Leave the findings recorded in this baseline alone."),
    no_gitignore: bool = typer.Option(False, "--no-gitignore", help="Fix files that .gitignore excludes too."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the changes, or nothing."),
) -> None:
    """Rewrite what `tpucheck scan` found where a codemod knows the fix: torch.cuda calls to
    torch.accelerator, hard-coded "cuda" devices to the current accelerator, CUDA autocast
    and GradScaler to torch.amp, NCCL to the default backend. The GPU path keeps working;
    suppressed and baselined findings are left alone.

    \b
    Examples:
      tpucheck fix --diff                 show what would change; exit 1 if anything would
      tpucheck fix ./repo                 apply the safe fixes in place
      tpucheck fix . --unsafe-fixes       also the fixes it cannot prove safe (listed with why)
    """
    from tpucheck.api import load_settings, scan_root
    from tpucheck.config.settings import Flags
    from tpucheck.fix.output import print_diff, print_summary
    from tpucheck.fix.runner import run_fix

    paths = paths or [Path(".")]
    for path in paths:
        if not os.path.lexists(path):
            raise UsageProblem(f"no such file or directory: {path}")
    root, _ = scan_root([str(p) for p in paths])
    flags = Flags(
        target=target, select=_split(select), ignore=_split(ignore), exclude=tuple(exclude or ()), rules=tuple(rules or ()),
        baseline=baseline, no_gitignore=no_gitignore, no_cache=True,
    )  # fmt: skip
    settings = load_settings(root, flags, config_file=config_file, isolated=isolated)
    report = run_fix([str(p) for p in paths], settings, unsafe=unsafe_fixes, write=not diff)
    if diff:
        print_diff(report, sys.stdout)
        if not quiet:
            print_summary(report, sys.stderr, diff=True)
        _report_problems(report.before.configuration_errors)
        raise typer.Exit(EXIT_USAGE if report.before.configuration_errors else EXIT_GATE if report.changed_files else EXIT_OK)
    if not quiet:
        print_summary(report, sys.stdout, diff=False)
    _report_problems(report.before.configuration_errors)
    raise typer.Exit(EXIT_USAGE if report.before.configuration_errors else EXIT_OK)


def _nothing_to_analyze(paths: list[str], result: ScanResult) -> str:
    """A gate over nothing would pass for ever (a typo in a CI path, a text file): say so."""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    c = result.coverage
    if c.files_found == 0:
        what = f"no Python, notebook, C/C++/CUDA, manifest or build file in {shown}"
    else:
        found = "the 1 file" if c.files_found == 1 else f"none of the {c.files_found:,} files"
        what = f"{found} found in {shown} could {'not ' if c.files_found == 1 else ''}be analyzed ({_count(c.files_errored, 'error')}, {c.files_skipped:,} skipped)"
    return f"nothing to analyze: {what} (--allow-empty passes anyway)"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _notes(settings: Settings) -> None:
    """What the user may want to know about the run itself, on stderr."""
    stats = settings.cache_stats
    if stats is not None and stats.disabled_reason and settings.use_cache and settings.cache_dir is not None:
        typer.echo(f"tpucheck: note: results not cached: {stats.disabled_reason}", err=True)
    if settings.write_baseline is not None:
        typer.echo(f"tpucheck: recorded the findings in {settings.write_baseline}", err=True)


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    parts = value.split("/")
    if len(parts) == 2 and all(part.isdigit() for part in parts):
        k, n = int(parts[0]), int(parts[1])
        if 1 <= k <= n:
            return k, n
    raise UsageProblem(f"--shard takes K/N with 1 <= K <= N (e.g. 2/4), not {value!r}")


def _report_problems(problems: list[ScanError]) -> None:
    """After the report, as ruff and bandit end with theirs: a run that exits 2 ends with
    why (on stderr, so a report piped to a file stays a report)."""
    for problem in problems:
        typer.echo(f"tpucheck: error: {problem.message}", err=True)


def _run_scan(root: str, settings: Settings, only: tuple[str, ...], *, show_progress: bool) -> ScanResult:
    from tpucheck.api import scan as api_scan

    if not show_progress:
        return api_scan(root, settings, paths=only)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("scan", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return api_scan(root, settings, paths=only, progress=advance)


def _emit(result: ScanResult, output_format: str, output: Path | None, report: ReportOptions | None = None) -> None:
    from tpucheck.report import FORMATS
    from tpucheck.report.paths import HERE_FORMATS, display_prefix, from_here

    writer = FORMATS[output_format]
    report = report or ReportOptions()
    if output_format in HERE_FORMATS:
        result = from_here(result, display_prefix(result.root))
    if output is None:
        colour = output_format == "terminal" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        writer(result, sys.stdout, replace(report, colour=colour))
        return
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as stream:
            writer(result, stream, replace(report, colour=False))
    except OSError as exc:
        raise UsageProblem(f"cannot write {output}: {exc.strerror or exc}") from None


def _gate(result: ScanResult, fail_under: float | None, fail_on: str | None) -> int:
    """The score gate judges the whole score; the severity gate only new findings (not
    baselined, and on changed lines when --diff-base is given)."""
    reasons = []
    if fail_under is not None and result.score.score < fail_under:
        reasons.append(f"score {result.score.score:.1f} is below {fail_under:g}")
    if fail_on is not None:
        bar = severity_rank(fail_on)
        tripped = [f for f in result.gated_findings() if severity_rank(f.severity) <= bar]
        if tripped:
            scope = "new " if result.baseline or result.diff_base else ""
            reasons.append(f"{len(tripped)} {scope}findings at or above {fail_on}")
    if reasons:
        typer.echo("tpucheck: gate failed: " + "; ".join(reasons), err=True)
        return EXIT_GATE
    return EXIT_OK


@app.command("merge", cls=ReadableCommand, short_help="Combine shard reports, or render a JSON report again.")
def merge_command(
    reports: list[Path] = typer.Argument(..., metavar="REPORT", help="JSON reports of every shard (--shard K/N), or one JSON report to render again.", show_default=False),
    output_format: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT", help=f"Report format: {', '.join(FORMAT_NAMES)} (default: terminal)."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to this file instead of stdout."),
    fail_under: float | None = typer.Option(None, "--fail-under", metavar="SCORE", help="Exit 1 when the merged score is below this (0-100)."),
    fail_on: str | None = typer.Option(None, "--fail-on", metavar="SEVERITY", help=f"Exit 1 on any new finding at or above this severity: {', '.join(SEVERITIES)}."),
    rules: list[Path] | None = typer.Option(None, "--rules", metavar="FILE|DIR", help="Extra rule files the scan used (repeatable; adds to extend-rules)."),
    config_file: Path | None = typer.Option(None, "--config", metavar="FILE", help="Read settings from this file instead of the nearest tpucheck.toml / pyproject.toml."),
    isolated: bool = typer.Option(False, "--isolated", help="Ignore every configuration file."),
    step_summary: bool = typer.Option(False, "--step-summary", help="Size Markdown for $GITHUB_STEP_SUMMARY (1 MiB) instead of a PR comment (65,536 characters)."),
) -> None:
    """Combine shard results into one report with the score one scan would give, or render a
    JSON report in another format (scan once in CI, then write SARIF, Markdown, annotations).

    \b
    Examples:
      tpucheck merge s1.json s2.json --fail-under 60
      tpucheck merge tpucheck.json -f sarif -o tpucheck.sarif
    """
    from tpucheck.config.file import Config, load_config
    from tpucheck.config.settings import Flags, resolve_settings
    from tpucheck.gates.merge import MergeError, merge_reports
    from tpucheck.report import FORMATS
    from tpucheck.ruleset import RuleFileError
    from tpucheck.ruleset.loader import load_ruleset_lenient

    config = Config() if isolated else load_config(Path.cwd(), explicit=config_file, formats=FORMATS)
    settings = resolve_settings(config, Flags(output_format=output_format, fail_under=fail_under, fail_on=fail_on), formats=tuple(FORMATS))
    try:
        ruleset, _ = load_ruleset_lenient([*config.extend_rules, *(rules or [])])
        result = merge_reports(reports, ruleset)
    except (MergeError, RuleFileError) as exc:
        raise UsageProblem(str(exc)) from None
    _emit(result, settings.output_format, output, ReportOptions(size_limit=STEP_SUMMARY_LIMIT if step_summary else None))
    _report_problems(result.configuration_errors)
    code = _gate(result, settings.fail_under, settings.fail_on)
    raise typer.Exit(EXIT_USAGE if result.configuration_errors else code)


@app.command("trace", cls=ReadableCommand, short_help="Run a model, sandboxed: the ops it really uses.")
def trace_command(
    model: str = typer.Argument(..., metavar="MODULE:FACTORY", help="Builds the nn.Module (called with no arguments).", show_default=False),
    inputs: str = typer.Option(..., "--input", metavar="MODULE:FN", help="Returns one batch: a tensor, a tuple of positional inputs or a dict of keyword inputs."),
    loss: str | None = typer.Option(None, "--loss", metavar="MODULE:FN", help="FN(output, batch) -> scalar loss (default: the output's own loss, else the mean of its first float tensor)."),
    optimizer: str | None = typer.Option(None, "--optimizer", metavar="MODULE:FN", help="FN(model) -> optimizer (default: AdamW, lr 1e-3)."),
    phases: str = typer.Option("inference,training", "--phases", metavar="PHASES", help="inference, training or both (comma-separated)."),
    target: str = typer.Option("torchtpu", "--target", "-t", metavar="TARGET", help="Judge against torchtpu (default) or xla."),
    device: str = typer.Option("fake", "--device", metavar="DEVICE", help="fake (a pretend tpu device, no memory; default), meta, or cpu (real tensors: follows branches on values)."),
    dtype: str = typer.Option("float32", "--dtype", metavar="DTYPE", help="float32 or bfloat16 (casts the model and floating inputs)."),
    no_graph_breaks: bool = typer.Option(False, "--no-graph-breaks", help="Skip torch._dynamo.explain (graph breaks) to save time."),
    root: Path = typer.Option(Path("."), "--root", metavar="DIR", help="The project: put on sys.path, and paths are reported relative to it."),
    allow_exec: bool = typer.Option(False, "--allow-exec", help="Consent to importing and running the model's code (sandboxed)."),
    timeout: float = typer.Option(300.0, "--timeout", min=1, metavar="SECONDS", help="Wall-clock limit for the run (default 300)."),
    memory_mb: int = typer.Option(8192, "--memory-mb", min=512, metavar="MB", help="Address-space limit of the run (default 8192)."),
    output_format: str = typer.Option("terminal", "--format", "-f", metavar="FORMAT", help="terminal or json (the report `scan --trace` reads)."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to this file instead of stdout."),
    fail_on: str | None = typer.Option(None, "--fail-on", metavar="SEVERITY", help=f"Exit 1 on any finding at or above this severity: {', '.join(SEVERITIES)}."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No notes on stderr."),
) -> None:
    """Build the model, run inference and one training step apart in a sandboxed child, and
    report every ATen op per phase with its calls, the first line of yours that reached it,
    and its status on the target; plus host syncs, dynamic shapes and graph breaks. Runs
    your code: refuses without --allow-exec.

    \b
    Examples:
      tpucheck trace mypkg.model:build --input mypkg.data:batch --allow-exec
      tpucheck trace m:build --input m:batch --allow-exec -f json -o trace.json
      tpucheck scan . --trace trace.json        static findings confirmed at run time
    """
    from tpucheck.ruleset import load_ruleset
    from tpucheck.trace.command import TraceUsage, cli_trace

    try:
        code = cli_trace(
            model=model, inputs=inputs, loss=loss, optimizer=optimizer, phases=_split([phases]), target=target, device=device,
            dtype=dtype, graph_breaks=not no_graph_breaks, root=root, allow_exec=allow_exec, timeout=timeout, memory_mb=memory_mb,
            output_format=output_format, fail_on=fail_on, quiet=quiet, ruleset=load_ruleset(), write=lambda text: _write_text(text, output),
        )  # fmt: skip
    except TraceUsage as exc:
        raise UsageProblem(str(exc)) from None
    raise typer.Exit(code)


@app.command("init", cls=ReadableCommand, short_help="Write a commented starter configuration.")
def init_command(
    directory: Path = typer.Argument(Path("."), help="The project's directory.", show_default=True),
    pyproject: bool | None = typer.Option(None, "--pyproject/--toml", help="Append [tool.tpucheck] to pyproject.toml, or write tpucheck.toml (default: pyproject.toml when there is one)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing tpucheck.toml."),
) -> None:
    """Write a commented starter configuration: every setting explained, the blocker gate on."""
    from tpucheck.config.init_template import InitError, write_init

    if not directory.is_dir():
        raise UsageProblem(f"not a directory: {directory}")
    try:
        written = write_init(directory, pyproject=pyproject, force=force)
    except InitError as exc:
        raise UsageProblem(str(exc)) from None
    typer.echo(f"tpucheck: wrote {written}")


RULE_FORMATS = ("terminal", "json", "markdown")


rules_app = typer.Typer(help="List the rules, or test rule files' examples.", rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(rules_app, name="rules")


@rules_app.callback(invoke_without_command=True)
def rules_command(
    ctx: typer.Context,
    category: str | None = typer.Option(None, "--category", metavar="CATEGORY", help=f"Only this category: {', '.join(CATEGORIES)}."),
    severity: str | None = typer.Option(None, "--severity", metavar="SEVERITY", help=f"Only this severity: {', '.join(SEVERITIES)}."),
    output_format: str = typer.Option("terminal", "--format", "-f", metavar="FORMAT", help="terminal (one line per rule), json, or markdown (the docs/rules.md page)."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write to this file instead of stdout."),
    rules: list[Path] | None = typer.Option(None, "--rules", metavar="FILE|DIR", help="Extra rule file or directory (repeatable)."),
    long: bool = typer.Option(False, "--long", help="Also category, confidence, workloads and the fix of each rule."),
) -> None:
    """List the rules tpucheck applies; `--format markdown -o docs/rules.md` regenerates the docs."""
    if ctx.invoked_subcommand is not None:
        return
    _check_format(output_format)
    if category is not None and category not in CATEGORIES:
        raise UsageProblem(f"unknown category {category!r}: choose one of {', '.join(CATEGORIES)}")
    if severity is not None and severity not in SEVERITIES:
        raise UsageProblem(f"unknown severity {severity!r}: choose one of {', '.join(SEVERITIES)}")
    from tpucheck.report import ruledocs

    ruleset = _load_rules(rules, None, None)
    chosen = [r for r in ruleset.rules if (category is None or r.category == category) and (severity is None or r.severity == severity)]
    if output_format == "json":
        _write_text(json.dumps([ruledocs.rule_to_dict(r) for r in chosen], indent=2, ensure_ascii=False) + "\n", output)
    elif output_format == "markdown":
        _write_text(ruledocs.markdown_page(chosen, ruleset.judgement.scoring, ruledocs.judged_by_target(ruleset)), output)
    else:
        _write_rich(ruledocs.terminal_table(chosen, long=long), output)


@rules_app.command("test", cls=ReadableCommand)
def rules_test_command(
    files: list[Path] = typer.Argument(..., metavar="RULE_FILE", help="Rule files (YAML) or directories of them.", show_default=False),
) -> None:
    """Run the examples of your own rule files: each `flag` example must be flagged by its
    rule and each `pass` example must not. Exit 1 when one fails, 2 when a file is invalid."""
    from tpucheck.analyze.rule_examples import check_rule, rule_examples
    from tpucheck.ruleset import RuleFileError
    from tpucheck.ruleset.loader import load_ruleset_lenient, rule_files

    for path in files:
        if not path.exists():
            raise UsageProblem(f"no such file or directory: {path}")
    try:
        ruleset, problems = load_ruleset_lenient(files)
    except RuleFileError as exc:
        raise UsageProblem(f"invalid built-in rule file (a bug): {exc}") from None
    mine = {str(path) for path in rule_files(files, builtin=False)}
    tested = [rule for rule in ruleset.rules if rule.source.rpartition(":")[0] in mine]
    failed = 0
    for rule in tested:
        outcomes = check_rule(ruleset, rule)
        bad = [o for o in outcomes if not o.ok]
        failed += len(bad)
        status = "FAIL" if bad else "ok  "
        typer.echo(f"{status} {rule.id} {rule.name} ({rule.source}): {len(outcomes) - len(bad)}/{len(outcomes)} examples")
        for outcome in bad:
            first = next((line.strip() for line in outcome.example.code.splitlines() if line.strip()), "")
            typer.echo(f"     {outcome.expect} example {outcome.number}: {outcome.problem}: {first[:80]}")
    for problem in problems:
        typer.echo(f"tpucheck: error: {problem}", err=True)
    total = sum(len(rule_examples(rule)) for rule in tested)
    typer.echo(f"{len(tested)} rules, {total} examples: {total - failed} passed, {failed} failed" + (f"; {len(problems)} problems in rule files" if problems else ""))
    raise typer.Exit(EXIT_USAGE if problems else EXIT_GATE if failed else EXIT_OK)


@app.command("explain", cls=ReadableCommand, short_help="Explain one rule: why, fixes per target, examples.")
def explain_command(
    rule_ref: str = typer.Argument(..., metavar="ID-OR-NAME", help="A rule id (CA001, any case) or name (tensor-item).", show_default=False),
    output_format: str = typer.Option("terminal", "--format", "-f", metavar="FORMAT", help="terminal, json or markdown."),
    rules: list[Path] | None = typer.Option(None, "--rules", metavar="FILE|DIR", help="Extra rule file or directory (repeatable)."),
) -> None:
    """Explain one rule: why it matters on TPU, the fix per target, what it matches, examples, sources.

    \b
    Examples:
      tpucheck explain CA001
      tpucheck explain tensor-item -f markdown
    """
    _check_format(output_format)
    from tpucheck.report import ruledocs

    ruleset = _load_rules(rules, None, None)
    rule = _find_rule(ruleset, rule_ref)
    if output_format == "json":
        _write_text(json.dumps(ruledocs.rule_to_dict(rule), indent=2, ensure_ascii=False) + "\n", None)
    elif output_format == "markdown":
        _write_text(ruledocs.markdown_rule(rule, ruledocs.judged_by_target(ruleset).get(rule.id)), None)
    else:
        _write_rich(ruledocs.terminal_rule(rule), None)


def _check_format(output_format: str) -> None:
    if output_format not in RULE_FORMATS:
        raise UsageProblem(f"unknown format {output_format!r}: choose one of {', '.join(RULE_FORMATS)}")


def _find_rule(ruleset: Ruleset, ref: str) -> Rule:
    """By id (any case) or by name; a miss names up to three close ids or names."""
    from tpucheck.ruleset.select import close_rules, find_rule

    found = find_rule(ruleset, ref)
    if found is None:
        close = close_rules(ruleset, ref.strip().lower())
        raise UsageProblem(f"unknown rule {ref!r}" + (f"; did you mean {', '.join(close)}?" if close else "; `tpucheck rules` lists them"))
    return found


def _write_text(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
    except OSError as exc:
        raise UsageProblem(f"cannot write {output}: {exc.strerror or exc}") from None


def _write_rich(renderable: object, output: Path | None) -> None:
    """Colour only on a terminal (and never with NO_COLOR); plain text otherwise, as wide as
    the terminal or COLUMNS (80 when neither), without the trailing spaces rich pads lines
    with (files and pipes stay clean)."""
    import io

    from rich.console import Console

    colour = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    if colour:
        Console(force_terminal=True, highlight=False).print(renderable, crop=False)
        return
    buffer = io.StringIO()
    # crop=False: a link longer than the width is printed whole, never cut
    Console(file=buffer, force_terminal=False, no_color=True, width=terminal_width(), highlight=False).print(renderable, crop=False)
    _write_text("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()), output)


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("tpucheck: aborted", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        settings = sys.modules.get("tpucheck.config.settings")  # a run that never loaded it did not raise its error
        if isinstance(exc, UsageProblem) or (settings is not None and isinstance(exc, settings.SettingsError)):
            typer.echo(f"tpucheck: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        if callable(getattr(exc, "show", None)) and hasattr(exc, "exit_code"):
            getattr(exc, "show")()  # noqa: B009 - a usage error found by the argument parser (click's or typer's)
            sys.exit(EXIT_USAGE)
        traceback.print_exc()
        typer.echo(f"tpucheck: internal error (a bug, please report it): {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_BUG)
    sys.exit(code if isinstance(code, int) else EXIT_OK)

