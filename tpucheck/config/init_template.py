"""`tpucheck init`: the commented starter config, and writing it without clobbering or
shadowing a config already there.

API
---
init_config_text(*, pyproject=False) -> str
write_init(directory, *, pyproject=None, force=False) -> Path
    Raises `InitError` (or its subclass `ConfigExists`), one-line messages.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tpucheck.config.file import CONFIG_FILE, PYPROJECT, declares_table, display_path, has_table
from tpucheck.config.formats import FORMAT_NAMES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class InitError(Exception):
    """`tpucheck init` cannot write the starter config; the message is one line."""


class ConfigExists(InitError):
    """A config is already there and writing one would clobber or shadow it."""


_TEMPLATE = """\
# Settings for tpucheck scans of this directory and everything below it.
# Command-line options override them. Uncomment a line to use it.

# Exit 1 on any finding at or above this severity: blocker, major, minor or info.
fail-on = "blocker"

# Exit 1 when the readiness score (0 to 100) is below this.
# fail-under = 80

# Only these rules: ids, id prefixes, names or categories.
# select = ["CA", "custom-kernel", "host-sync"]

# Leave out these rules (the same forms as select).
# ignore = ["CA007", "cuda-nvtx"]

# More paths to leave out of the scan, in .gitignore syntax.
# exclude = ["third_party/", "legacy/**"]

# Your own YAML rule files or directories, relative to this file (globs and ** allowed).
# extend-rules = ["tpucheck-rules/*.yaml"]

# What to judge against: "torchtpu" (PyTorch's native tpu device, the default).
# Or "xla" (PyTorch/XLA), where host syncs and dynamic shapes weigh much more.
# target = "xla"

# Report format when --format is not given: @FORMATS@.
# format = "markdown"

# Worker processes (default: all cores).
# jobs = 4

# Files larger than this many bytes are listed as skipped instead of scanned.
# max-file-size = 10000000

# Seconds one file may take before it is given up on and listed under errors.
# file-time-budget = 30

# A baseline file (relative to this file) records today's findings.
# Findings in it are still reported and scored; fail-on judges only new ones.
# Write it with `tpucheck scan . --write-baseline .tpucheck-baseline.json`.
# baseline = ".tpucheck-baseline.json"

# Where the analysis cache is kept (relative to this file).
# cache-dir = ".tpucheck_cache"

# Set to false to turn the analysis cache off.
# cache = false

# Set to false to scan files that .gitignore excludes too.
# respect-gitignore = false

# Rules to leave out for some paths only: a .gitignore-style glob = [rules].
# @PER_FILE_HEADER@
# "tests/**" = ["host-sync"]
# "scripts/*.py" = ["CA007", "cuda-api"]
"""


def init_config_text(*, pyproject: bool = False) -> str:
    """The commented starter config: every key shown with an example, only the gate on.
    For pyproject.toml it is a `[tool.tpucheck]` section to append."""
    text = _TEMPLATE.replace("@FORMATS@", ", ".join(FORMAT_NAMES))
    if pyproject:
        return "[tool.tpucheck]\n" + text.replace("@PER_FILE_HEADER@", "[tool.tpucheck.per-file-ignores]")
    return text.replace("@PER_FILE_HEADER@", "[per-file-ignores]")


def write_init(directory: Path, *, pyproject: bool | None = None, force: bool = False) -> Path:
    """Writes the starter config and returns its path.

    `pyproject=None` appends to an existing pyproject.toml unless a tpucheck.toml is
    there, else writes tpucheck.toml. Nothing is ever clobbered or shadowed silently:
    an existing tpucheck.toml is overwritten only with `force`, a pyproject.toml that
    already has the table is refused even with `force`, and a new tpucheck.toml next to
    such a pyproject.toml (it would take precedence) needs `force`.
    """
    own, project = Path(directory) / CONFIG_FILE, Path(directory) / PYPROJECT
    if pyproject is None:
        pyproject = project.is_file() and not own.exists()
    if pyproject:
        return _append_to_pyproject(project, own)
    return _write_own(own, project, force)


def _append_to_pyproject(project: Path, own: Path) -> Path:
    if os.path.lexists(own):
        raise ConfigExists(f"{display_path(own)} exists and would take precedence over {display_path(project)}: edit it instead")
    original = _original_bytes(project)
    try:
        document = tomllib.loads(original.decode("utf-8-sig"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise InitError(f"cannot add to {display_path(project)}: it is not valid TOML ({' '.join(str(exc).split())})") from None
    if has_table(document):
        raise ConfigExists(f"{display_path(project)} already has a [tool.tpucheck] table: edit it there")
    newline = "\r\n" if b"\r\n" in original else "\n"
    addition = (_separator(original, newline) + init_config_text(pyproject=True).replace("\n", newline)).encode("utf-8")
    try:
        tomllib.loads((original + addition).decode("utf-8-sig"))
    except ValueError as exc:
        raise InitError(f"cannot add [tool.tpucheck] to {display_path(project)}: the result would not be valid TOML ({' '.join(str(exc).split())})") from None
    try:
        with open(project, "ab") as stream:
            stream.write(addition)
    except OSError as exc:
        raise InitError(f"cannot write {display_path(project)}: {exc.strerror or exc}") from None
    return project


def _original_bytes(project: Path) -> bytes:
    if not os.path.lexists(project):
        return b""
    try:
        return project.read_bytes()
    except OSError as exc:
        raise InitError(f"cannot read {display_path(project)}: {exc.strerror or exc}") from None


def _separator(original: bytes, newline: str) -> str:
    """A blank line between the existing text and the new section, and no more."""
    if not original or original.endswith((b"\n\n", b"\r\n\r\n")):
        return ""
    return newline if original.endswith(b"\n") else newline * 2


def _write_own(own: Path, project: Path, force: bool) -> Path:
    if os.path.lexists(own) and not force:
        raise ConfigExists(f"{display_path(own)} already exists (--force overwrites it)")
    if not force and project.is_file() and declares_table(project):
        raise ConfigExists(f"{display_path(project)} already has a [tool.tpucheck] table, which a new {CONFIG_FILE} would override (--force writes it anyway)")
    try:
        with open(own, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(init_config_text())
    except OSError as exc:
        raise InitError(f"cannot write {display_path(own)}: {exc.strerror or exc}") from None
    return own
