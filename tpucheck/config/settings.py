"""One scan's settings: the configuration file, then the command-line flags, then defaults.

There is one settings object, `Settings`, resolved once by `resolve_settings` (file,
then flags, for every key: exclude, select and ignore included), and the engine takes it
as it is. `Config` (config.py) is only what the file said, validated; `Flags` only what
the command line said. A library caller builds `Settings` directly, or asks
`tpucheck.load_settings` for what the CLI would use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpucheck.analyze.budget import DEFAULT_FILE_TIME_BUDGET
from tpucheck.discover.walk import DEFAULT_MAX_FILE_SIZE
from tpucheck.findings import SEVERITIES, ScanError
from tpucheck.ruleset.model import DEFAULT_TARGET, TARGETS

if TYPE_CHECKING:
    from tpucheck.analyze.cache import CacheStats
    from tpucheck.config.file import Config
    from tpucheck.ruleset.model import Ruleset

__all__ = ["Flags", "ScanOptions", "Settings", "SettingsError", "default_jobs", "resolve_settings"]


class SettingsError(Exception):
    """A flag with a value no setting takes: one line, exit 2."""


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a scan, its post-scan steps, its gate and its report depend on."""

    # which files
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    shard: tuple[int, int] | None = None
    """(K, N): analyze only the K-th of N stable shares of the files (1-based)."""
    # which rules, judged how
    extend_rules: tuple[Path, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target: str = DEFAULT_TARGET
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(gitignore-style pattern, rule refs): those rules' findings in matching files are
    suppressed, with the pattern as the reason."""
    # how to run
    jobs: int | None = None
    prefilter: bool = True
    file_time_budget: float | None = DEFAULT_FILE_TIME_BUDGET
    """Seconds one file's analysis may take before it becomes a "timeout" error; None: no limit."""
    use_cache: bool = False
    """Keep each file's result in the incremental cache (off by default so that library
    and test callers never write into the trees they scan; the CLI turns it on)."""
    cache_dir: str | None = None
    """Where the cache lives; None: `<root>/.tpucheck_cache` (no cache for a single-file root)."""
    cache_stats: CacheStats | None = field(default=None, compare=False)
    """Filled in by the scan (hits, misses, writes) when the caller passes one."""
    # after the scan
    write_baseline: Path | None = None
    """Record the findings in this baseline file, then judge against it."""
    baseline: Path | None = None
    diff_base: str | None = None
    """Gate only on findings in lines changed since the merge base of this ref and HEAD."""
    trace: Path | None = None
    """A `tpucheck trace` JSON report to confirm findings with and add the run's findings from."""
    # gate and report
    output_format: str = "terminal"
    fail_under: float | None = None
    fail_on: str | None = None
    # what resolving found wrong in the file (reported, never fatal)
    problems: tuple[ScanError, ...] = ()
    ruleset: Ruleset | None = field(default=None, compare=False, repr=False)
    """The rules to run, once loaded, selected and judged for the target; None: the
    built-in rules plus `extend_rules`, selected by `select`/`ignore`, for `target`."""


ScanOptions = Settings
"""The engine's historical name for the same object."""


@dataclass(frozen=True, slots=True)
class Flags:
    """What the command line said; None (or empty) means it said nothing."""

    output_format: str | None = None
    fail_under: float | None = None
    fail_on: str | None = None
    target: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    rules: tuple[Path, ...] = ()
    jobs: int | None = None
    max_file_size: int | None = None
    file_time_budget: float | None = None
    baseline: Path | None = None
    write_baseline: Path | None = None
    diff_base: str | None = None
    trace: Path | None = None
    shard: tuple[int, int] | None = None
    cache_dir: Path | None = None
    no_cache: bool = False
    no_gitignore: bool = False
    no_prefilter: bool = False


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def resolve_settings(config: Config, flags: Flags | None = None, *, formats: tuple[str, ...] = ()) -> Settings:
    """Flags win over the file, key by key; the file's values were validated when it was
    read, the flags' are checked here (`formats`: the report formats there are)."""
    flags = flags or Flags()
    if flags.output_format is not None and formats and flags.output_format not in formats:
        raise SettingsError(f"unknown format {flags.output_format!r}: choose one of {', '.join(formats)}")
    if flags.fail_on is not None and flags.fail_on not in SEVERITIES:
        raise SettingsError(f"unknown severity {flags.fail_on!r} for --fail-on: choose one of {', '.join(SEVERITIES)}")
    if flags.target is not None and flags.target not in TARGETS:
        raise SettingsError(f"unknown target {flags.target!r} for --target: choose one of {', '.join(TARGETS)}")
    if flags.fail_under is not None and not 0 <= flags.fail_under <= 100:
        raise SettingsError("--fail-under takes a score from 0 to 100")
    if flags.shard is not None and flags.write_baseline is not None:
        raise SettingsError("--write-baseline needs the whole tree: scan without --shard")
    cache_dir = _first(flags.cache_dir, config.cache_dir)
    return Settings(
        exclude=flags.exclude or config.exclude,
        respect_gitignore=not flags.no_gitignore and config.respect_gitignore is not False,
        max_file_size=_first(flags.max_file_size, config.max_file_size, DEFAULT_MAX_FILE_SIZE),
        shard=flags.shard,
        extend_rules=(*config.extend_rules, *flags.rules),
        select=flags.select or (config.select or ()),
        ignore=flags.ignore or config.ignore,
        target=_first(flags.target, config.target, DEFAULT_TARGET),
        per_file_ignores=config.per_file_ignores,
        jobs=_first(flags.jobs, config.jobs) or default_jobs(),
        prefilter=not flags.no_prefilter,
        file_time_budget=_first(flags.file_time_budget, config.file_time_budget, DEFAULT_FILE_TIME_BUDGET),
        use_cache=not flags.no_cache and config.cache is not False,
        cache_dir=None if cache_dir is None else str(cache_dir),
        write_baseline=flags.write_baseline,
        baseline=_first(flags.write_baseline, flags.baseline, config.baseline),
        diff_base=flags.diff_base,
        trace=flags.trace,
        output_format=_first(flags.output_format, config.format, "terminal"),
        fail_under=_first(flags.fail_under, config.fail_under),
        fail_on=_first(flags.fail_on, config.fail_on),
        problems=tuple(ScanError(p.file, "config", str(p)) for p in config.problems),
    )
