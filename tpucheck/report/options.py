"""How a report is laid out, as the user asked for it: one object the CLI fills and every
format reads, so a new option is one field, not a new parameter on seven writers."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

DEFAULT_MAX_FINDINGS = 40
"""Findings the terminal lists before it points to `--show-all`: a first read, not a log."""
FALLBACK_WIDTH = 80
STEP_SUMMARY_LIMIT = 1024 * 1024
"""GitHub's limit for `$GITHUB_STEP_SUMMARY`; a PR comment's (65,536) is Markdown's default."""


@dataclass(frozen=True, slots=True)
class ReportOptions:
    colour: bool = False
    width: int | None = None
    """Columns for text reports; None: `COLUMNS`, else the terminal's, else 80."""
    max_findings: int | None = DEFAULT_MAX_FINDINGS
    """None lists every finding (`--show-all`)."""
    statistics: bool = False
    """A count per rule instead of the findings, as `ruff --statistics` prints."""
    show_source: bool = False
    """The lines around each finding, read from the scanned tree."""
    verbose: bool = False
    """Each finding's message and code, and each plan step's fix (`--verbose`); by default
    a finding is one line and a rule's text is shown once."""
    size_limit: int | None = None
    """Bytes a size-bounded format (Markdown) may reach; None: the format's default."""

    def columns(self) -> int:
        return self.width if self.width else terminal_width()


def terminal_width() -> int:
    """`COLUMNS` first (what a user sets to force a width), then the terminal on any of the
    standard streams (stdout is often a pipe to `less` while stderr is the terminal), 80
    when there is none: the width is never frozen at a constant when piped."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    for stream in (sys.stdout, sys.stderr, sys.stdin):
        try:
            return max(os.get_terminal_size(stream.fileno()).columns, 20)
        except (AttributeError, ValueError, OSError):
            continue
    return FALLBACK_WIDTH
