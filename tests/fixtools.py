"""Helpers for the `tpucheck fix` tests: write a small project, fix it, read the result."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import tpucheck
from tpucheck.config.settings import Flags
from tpucheck.fix.runner import FixReport, run_fix


def fix_project(root: Path, files: dict[str, str], *, unsafe: bool = False, write: bool = False, flags: Flags | None = None) -> FixReport:
    """Write `files` (dedented) under `root`, then fix it as `tpucheck fix root` would."""
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(code))
    settings = tpucheck.load_settings(str(root), flags or Flags(no_cache=True), isolated=True)
    return run_fix([str(root)], settings, unsafe=unsafe, write=write)


def fixed(root: Path, code: str, *, unsafe: bool = False, name: str = "mod.py", extra: dict[str, str] | None = None) -> str:
    """The code of `name` after the fix (nothing written)."""
    report = fix_project(root, {name: code, **(extra or {})}, unsafe=unsafe)
    for change in report.files:
        if change.path == name:
            return change.after
    return dedent(code)


def notes(root: Path, code: str, *, unsafe: bool = False) -> list[tuple[str, int, bool, str]]:
    """(rule, line, fixed, note) of every finding a codemod looked at."""
    report = fix_project(root, {"mod.py": code}, unsafe=unsafe)
    return sorted((o.target.finding.rule, o.target.finding.span.line, o.fixed, o.note) for o in report.outcomes)
