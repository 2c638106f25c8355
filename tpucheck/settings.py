"""One scan's settings: command-line flags over the configuration file over defaults.

Kept apart from the CLI so that the precedence is stated once, and apart from config.py,
which only reads and validates the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpucheck.budget import DEFAULT_FILE_TIME_BUDGET
from tpucheck.config import Config
from tpucheck.discovery import DEFAULT_MAX_FILE_SIZE
from tpucheck.engine import default_jobs
from tpucheck.findings import SEVERITIES
from tpucheck.reports import FORMATS
from tpucheck.ruleset.model import DEFAULT_TARGET, TARGETS


class SettingsError(Exception):
    """A flag with a value no setting takes: one line, exit 2."""


@dataclass(frozen=True, slots=True)
class Settings:
    output_format: str = "terminal"
    fail_under: float | None = None
    fail_on: str | None = None
    target: str = DEFAULT_TARGET
    jobs: int = 1
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    file_time_budget: float = DEFAULT_FILE_TIME_BUDGET
    baseline: Path | None = None
    cache: bool = True
    cache_dir: Path | None = None
    respect_gitignore: bool = True


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def resolve_settings(
    config: Config,
    *,
    output_format: str | None = None,
    fail_under: float | None = None,
    fail_on: str | None = None,
    target: str | None = None,
    jobs: int | None = None,
    max_file_size: int | None = None,
    file_time_budget: float | None = None,
    baseline: Path | None = None,
    cache_dir: Path | None = None,
    no_cache: bool = False,
    no_gitignore: bool = False,
) -> Settings:
    """Flags win over the file; the file's values were validated when it was read."""
    if output_format is not None and output_format not in FORMATS:
        raise SettingsError(f"unknown format {output_format!r}: choose one of {', '.join(FORMATS)}")
    if fail_on is not None and fail_on not in SEVERITIES:
        raise SettingsError(f"unknown severity {fail_on!r} for --fail-on: choose one of {', '.join(SEVERITIES)}")
    if target is not None and target not in TARGETS:
        raise SettingsError(f"unknown target {target!r} for --target: choose one of {', '.join(TARGETS)}")
    if fail_under is not None and not 0 <= fail_under <= 100:
        raise SettingsError("--fail-under takes a score from 0 to 100")
    return Settings(
        output_format=_first(output_format, config.format, "terminal"),
        fail_under=_first(fail_under, config.fail_under),
        fail_on=_first(fail_on, config.fail_on),
        target=_first(target, config.target, DEFAULT_TARGET),
        jobs=_first(jobs, config.jobs) or default_jobs(),
        max_file_size=_first(max_file_size, config.max_file_size, DEFAULT_MAX_FILE_SIZE),
        file_time_budget=_first(file_time_budget, config.file_time_budget, DEFAULT_FILE_TIME_BUDGET),
        baseline=_first(baseline, config.baseline),
        cache=not no_cache and config.cache is not False,
        cache_dir=_first(cache_dir, config.cache_dir),
        respect_gitignore=not no_gitignore and config.respect_gitignore is not False,
    )


def cache_options(settings: Settings) -> dict[str, Any]:
    """The ScanOptions fields for the cache and the time budget (the engine puts the cache
    in the scanned root's `.tpucheck_cache` unless told otherwise)."""
    return {
        "use_cache": settings.cache,
        "cache_dir": None if settings.cache_dir is None else str(settings.cache_dir),
        "file_time_budget": settings.file_time_budget,
    }
