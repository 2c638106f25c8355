"""Baselines: today's findings, recorded by fingerprint, so a gate fails only on new ones.

A fingerprint hashes the rule, the path and the finding's normalized source plus its
index among identical ones, never the line: a finding that moved, or whose file gained
unrelated edits, keeps its fingerprint and stays baselined, while one more identical
call in the same file gets the next index and is new. The file lists the rule, path and
snippet beside each fingerprint so that a reviewer can read what was accepted.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from tpucheck import __version__
from tpucheck.result import ScanResult

BASELINE_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or is not one: one line, naming the file."""


@dataclass(frozen=True, slots=True)
class Baseline:
    path: str
    fingerprints: frozenset[str]


def render_baseline(result: ScanResult) -> str:
    """Every active finding (suppressed ones need no baseline), sorted, one JSON document."""
    entries = sorted(
        ({"fingerprint": f.fingerprint, "rule": f.rule, "path": f.path, "snippet": f.snippet} for f in result.findings),
        key=lambda e: (e["path"], e["rule"], e["fingerprint"]),
    )
    document = {"tpucheck_baseline": BASELINE_VERSION, "tool_version": __version__, "findings": entries}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_baseline(result: ScanResult, path: Path) -> int:
    """Write atomically (a temp file renamed over the old one), so an interrupted run never
    leaves half a baseline for the next gate to misread. Returns the number recorded."""
    text = render_baseline(result)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        handle, temp = tempfile.mkstemp(prefix=".tpucheck-baseline-", dir=directory)
        # mkstemp makes the file 0600: a baseline is committed and read by CI, so it gets
        # the mode a plain write would give it (0644 under the usual umask 022), or keeps
        # the mode of the file it replaces.
        os.chmod(handle, _mode_for(path))
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.replace(temp, path)
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {path}: {exc.strerror or exc}") from None
    return len(result.findings)


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def load_baseline(path: Path) -> Baseline:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BaselineError(f"{path}: cannot read baseline: {reason}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}: not a baseline file: invalid JSON ({exc.msg})") from None
    if not isinstance(document, dict) or "tpucheck_baseline" not in document:
        raise BaselineError(f"{path}: not a baseline file (write one with `tpucheck scan --write-baseline FILE`)")
    if document["tpucheck_baseline"] != BASELINE_VERSION:
        raise BaselineError(f"{path}: baseline format {document['tpucheck_baseline']!r} is not {BASELINE_VERSION}; rewrite it with --write-baseline")
    entries = document.get("findings")
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries):
        raise BaselineError(f"{path}: findings must be a list of entries with a fingerprint")
    return Baseline(str(path), frozenset(e["fingerprint"] for e in entries))


def apply_baseline(result: ScanResult, baseline: Baseline) -> ScanResult:
    """Mark the findings the baseline holds. The score is left alone: it is the whole truth
    about the code, and a baseline only decides what the gate forgives."""
    result.findings = [replace(f, baselined=True) if f.fingerprint in baseline.fingerprints else f for f in result.findings]
    result.baseline = baseline.path
    return result
