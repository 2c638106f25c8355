"""The Python API: what `tpucheck scan` does, for a library caller.

    import tpucheck
    result = tpucheck.scan("path/to/repo")                      # as `tpucheck scan path/to/repo`
    settings = tpucheck.load_settings("repo", tpucheck.Flags(target="xla", select=("CA",)))
    result = tpucheck.scan("repo", settings)                    # as `... --target xla --select CA`
    result.score.score, result.score.grade, result.findings

The CLI is this module plus argument parsing, a report and an exit code: a test holds the
two equal (tests/test_api.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from tpucheck import engine
from tpucheck.config.file import Config, load_config
from tpucheck.config.settings import Flags, Settings, SettingsError, resolve_settings
from tpucheck.findings import ScanError
from tpucheck.report import FORMATS
from tpucheck.result import ScanResult
from tpucheck.ruleset import RuleFileError, load_ruleset
from tpucheck.ruleset.loader import load_ruleset_lenient
from tpucheck.ruleset.model import Ruleset
from tpucheck.ruleset.select import SelectionError, select_rules, unknown_selectors

__all__ = ["load_settings", "scan", "scan_root"]


def scan_root(paths: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """(root, the paths to scan inside it). One directory is the root itself; files, or
    several paths, are scanned relative to the current directory when they are inside it
    (pre-commit runs from the repository's top, so paths and fingerprints match a scan of
    the whole tree), else relative to their deepest common directory."""
    if len(paths) == 1 and os.path.isdir(paths[0]):
        return paths[0], ()
    absolute = [os.path.abspath(p) for p in paths]
    here = os.getcwd()
    if all(os.path.commonpath([here, p]) == here for p in absolute):
        return ".", tuple(absolute)
    parents = [p if os.path.isdir(p) else os.path.dirname(p) for p in absolute]
    return os.path.commonpath(parents), tuple(absolute)


def load_settings(path: str | os.PathLike[str] = ".", flags: Flags | None = None, *, config_file: Path | None = None, isolated: bool = False) -> Settings:
    """The settings `tpucheck scan PATH` would use with these flags: the nearest config file
    (or `config_file`, or none when `isolated`), then the flags, with the rules loaded,
    selected and judged for the target. A broken config entry or user rule file is left
    out and listed in `problems`; a bad flag raises SettingsError."""
    flags = flags or Flags()
    start = Path(path) if os.path.isdir(path) else Path(os.path.dirname(os.path.abspath(path)))
    config = Config() if isolated else load_config(start, explicit=config_file, formats=FORMATS)
    try:
        ruleset, rule_problems = load_ruleset_lenient([*config.extend_rules, *flags.rules])
    except RuleFileError as exc:
        raise SettingsError(f"invalid built-in rule file (a bug): {exc}") from None
    config = config.without_unknown_rule_refs(lambda ref: not unknown_selectors(ruleset, [ref]))
    settings = resolve_settings(config, flags, formats=tuple(FORMATS))
    problems = (*settings.problems, *(ScanError(p.file, "rules", str(p)) for p in rule_problems))
    return replace(settings, ruleset=_chosen(ruleset, settings), problems=problems)


def scan(path: str | os.PathLike[str] = ".", settings: Settings | None = None, *, paths: Sequence[str] = (), progress: engine.Progress | None = None) -> ScanResult:
    """Scan `path` (or only `paths` inside it) with `settings` (default: what the CLI would
    use there) and return the result after suppressions, per-file ignores, baseline and
    diff, with any configuration problems in `configuration_errors`."""
    root = os.fspath(path)
    if settings is None:
        settings = load_settings(root)
    ruleset = settings.ruleset
    if ruleset is None:
        try:
            ruleset = _chosen(load_ruleset(settings.extend_rules), settings)
        except RuleFileError as exc:
            raise SettingsError(f"invalid rule file: {exc}") from None
    return engine.scan(root, ruleset, settings, progress, paths=paths)


def _chosen(ruleset: Ruleset, settings: Settings) -> Ruleset:
    try:
        return select_rules(ruleset, settings.select, settings.ignore).for_target(settings.target)
    except SelectionError as exc:
        raise SettingsError(str(exc)) from None
