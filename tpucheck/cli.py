"""The command line: parses, calls, exits. Exit codes: 0 the gate passed, 1 it failed,
2 usage or configuration error, 3 a bug in tpucheck (with its traceback)."""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
import traceback
from pathlib import Path

import typer

from tpucheck import __version__, ruledocs
from tpucheck.engine import ScanOptions, default_jobs, scan
from tpucheck.findings import CATEGORIES, SEVERITIES, severity_rank
from tpucheck.reports import FORMATS
from tpucheck.result import ScanResult
from tpucheck.ruleset import RuleFileError, SelectionError, load_ruleset, select_rules
from tpucheck.ruleset.model import Rule, Ruleset

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_BUG = 0, 1, 2, 3

app = typer.Typer(
    name="tpucheck",
    help="How ready is this PyTorch codebase to move from CUDA GPUs to TPUs?",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class UsageProblem(Exception):
    """A mistake in how tpucheck was called: one line on stderr, exit 2."""


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _load_rules(rules: list[Path] | None, select: list[str] | None, ignore: list[str] | None) -> Ruleset:
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


@app.command("scan")
def scan_command(
    path: Path = typer.Argument(..., help="Directory (or file) to scan.", show_default=False),
    output_format: str = typer.Option("terminal", "--format", "-f", help=f"Report format: {', '.join(FORMATS)}."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    fail_under: float | None = typer.Option(None, "--fail-under", help="Exit 1 when the score is below this (0-100)."),
    fail_on: str | None = typer.Option(None, "--fail-on", help=f"Exit 1 on any finding at or above this severity: {', '.join(SEVERITIES)}."),
    select: list[str] | None = typer.Option(None, "--select", help="Only these rules: ids, id prefixes, names or categories (comma-separated or repeated)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", help="Leave out these rules: ids, id prefixes, names or categories."),
    exclude: list[str] | None = typer.Option(None, "--exclude", help="gitignore-style glob of paths to leave out (repeatable)."),
    rules: list[Path] | None = typer.Option(None, "--rules", help="Extra rule file or directory of rule files (repeatable)."),
    no_gitignore: bool = typer.Option(False, "--no-gitignore", help="Scan files that .gitignore excludes too."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores)."),
    max_file_size: int = typer.Option(5 * 1024 * 1024, "--max-file-size", min=1, help="Skip files larger than this many bytes."),
    no_prefilter: bool = typer.Option(False, "--no-prefilter", help="Parse every Python file, even those that mention nothing a rule looks for."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Scan a tree and report its TPU readiness; with --fail-under/--fail-on, gate CI."""
    if output_format not in FORMATS:
        raise UsageProblem(f"unknown format {output_format!r}: choose one of {', '.join(FORMATS)}")
    if fail_on is not None and fail_on not in SEVERITIES:
        raise UsageProblem(f"unknown severity {fail_on!r} for --fail-on: choose one of {', '.join(SEVERITIES)}")
    if fail_under is not None and not 0 <= fail_under <= 100:
        raise UsageProblem("--fail-under takes a score from 0 to 100")
    if not path.exists():
        raise UsageProblem(f"no such file or directory: {path}")
    ruleset = _load_rules(rules, select, ignore)
    options = ScanOptions(
        exclude=tuple(exclude or ()),
        respect_gitignore=not no_gitignore,
        max_file_size=max_file_size,
        jobs=jobs or default_jobs(),
        prefilter=not no_prefilter,
    )
    result = _run_scan(str(path), ruleset, options, show_progress=not quiet and sys.stderr.isatty())
    _emit(result, output_format, output)
    raise typer.Exit(_gate(result, fail_under, fail_on))


def _run_scan(root: str, ruleset: Ruleset, options: ScanOptions, *, show_progress: bool) -> ScanResult:
    if not show_progress:
        return scan(root, ruleset, options)
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

        return scan(root, ruleset, options, progress=advance)


def _emit(result: ScanResult, output_format: str, output: Path | None) -> None:
    writer = FORMATS[output_format]
    if output is None:
        colour = output_format == "terminal" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        writer(result, sys.stdout, colour)
        return
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as stream:
            writer(result, stream, False)
    except OSError as exc:
        raise UsageProblem(f"cannot write {output}: {exc.strerror or exc}") from None


def _gate(result: ScanResult, fail_under: float | None, fail_on: str | None) -> int:
    reasons = []
    if fail_under is not None and result.score.score < fail_under:
        reasons.append(f"score {result.score.score:.1f} is below {fail_under:g}")
    if fail_on is not None:
        bar = severity_rank(fail_on)
        tripped = [f for f in result.findings if severity_rank(f.severity) <= bar]
        if tripped:
            reasons.append(f"{len(tripped)} findings at or above {fail_on}")
    if reasons:
        typer.echo("tpucheck: gate failed: " + "; ".join(reasons), err=True)
        return EXIT_GATE
    return EXIT_OK


RULE_FORMATS = ("terminal", "json", "markdown")


@app.command("rules")
def rules_command(
    category: str | None = typer.Option(None, "--category", help=f"Only this category: {', '.join(CATEGORIES)}."),
    severity: str | None = typer.Option(None, "--severity", help=f"Only this severity: {', '.join(SEVERITIES)}."),
    output_format: str = typer.Option("terminal", "--format", "-f", help="terminal (one line per rule), json, or markdown (the docs/rules.md page)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    rules: list[Path] | None = typer.Option(None, "--rules", help="Extra rule file or directory (repeatable)."),
) -> None:
    """List the rules tpucheck applies; `--format markdown -o docs/rules.md` regenerates the docs."""
    _check_format(output_format)
    if category is not None and category not in CATEGORIES:
        raise UsageProblem(f"unknown category {category!r}: choose one of {', '.join(CATEGORIES)}")
    if severity is not None and severity not in SEVERITIES:
        raise UsageProblem(f"unknown severity {severity!r}: choose one of {', '.join(SEVERITIES)}")
    ruleset = _load_rules(rules, None, None)
    chosen = [r for r in ruleset.rules if (category is None or r.category == category) and (severity is None or r.severity == severity)]
    if output_format == "json":
        _write_text(json.dumps([ruledocs.rule_to_dict(r) for r in chosen], indent=2, ensure_ascii=False) + "\n", output)
    elif output_format == "markdown":
        _write_text(ruledocs.markdown_page(chosen), output)
    else:
        _write_rich(ruledocs.terminal_table(chosen), output)


@app.command("explain")
def explain_command(
    rule_ref: str = typer.Argument(..., metavar="ID-OR-NAME", help="A rule id (CA001, any case) or name (tensor-item).", show_default=False),
    output_format: str = typer.Option("terminal", "--format", "-f", help="terminal, json or markdown."),
    rules: list[Path] | None = typer.Option(None, "--rules", help="Extra rule file or directory (repeatable)."),
) -> None:
    """Explain one rule: why it matters on TPU, the fix per target, what it matches, examples, sources."""
    _check_format(output_format)
    rule = _find_rule(_load_rules(rules, None, None), rule_ref)
    if output_format == "json":
        _write_text(json.dumps(ruledocs.rule_to_dict(rule), indent=2, ensure_ascii=False) + "\n", None)
    elif output_format == "markdown":
        _write_text(ruledocs.markdown_rule(rule), None)
    else:
        _write_rich(ruledocs.terminal_rule(rule), None)


def _check_format(output_format: str) -> None:
    if output_format not in RULE_FORMATS:
        raise UsageProblem(f"unknown format {output_format!r}: choose one of {', '.join(RULE_FORMATS)}")


def _find_rule(ruleset: Ruleset, ref: str) -> Rule:
    """By id (any case) or by name; a miss names up to three close ids or names."""
    wanted = ref.strip().lower()
    for rule in ruleset.rules:
        if wanted in (rule.id.lower(), rule.name.lower()):
            return rule
    close = _close_rules(ruleset, wanted)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `tpucheck rules` lists them"
    raise UsageProblem(f"unknown rule {ref!r}{hint}")


_ID_PARTS = re.compile(r"([a-z]+)0*(\d+)")


def _close_rules(ruleset: Ruleset, wanted: str) -> list[str]:
    """Up to three ids or names like `wanted`: the same id without its zero padding first
    (`ca1`, `CA01` -> CA001), then difflib's closest, ties in alphabetical order."""
    spelled: dict[str, str] = {}
    for rule in ruleset.rules:
        spelled.setdefault(rule.id.lower(), rule.id)
        spelled.setdefault(rule.name.lower(), rule.name)
    parts = _ID_PARTS.fullmatch(wanted)
    same_id = [key for key in spelled if parts and (m := _ID_PARTS.fullmatch(key)) and m.groups() == parts.groups()]
    similar = difflib.get_close_matches(wanted, list(spelled), n=len(spelled), cutoff=0.6)
    ratio = {key: difflib.SequenceMatcher(None, wanted, key).ratio() for key in similar}
    ranked = same_id + sorted((k for k in similar if k not in same_id), key=lambda k: (-ratio[k], k))
    return [spelled[key] for key in ranked[:3]]


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
    """Colour only on a terminal (and never with NO_COLOR); plain text otherwise, 110 columns
    wide and without the trailing spaces rich pads lines with (files and pipes stay clean)."""
    import io

    from rich.console import Console

    colour = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    if colour:
        Console(force_terminal=True, highlight=False).print(renderable)
        return
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=False, no_color=True, width=110, highlight=False).print(renderable)
    _write_text("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()), output)


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except UsageProblem as exc:
        typer.echo(f"tpucheck: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("tpucheck: aborted", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if callable(getattr(exc, "show", None)) and hasattr(exc, "exit_code"):
            getattr(exc, "show")()  # noqa: B009 - a usage error found by the argument parser (click's or typer's)
            sys.exit(EXIT_USAGE)
        traceback.print_exc()
        typer.echo(f"tpucheck: internal error (a bug, please report it): {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_BUG)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
