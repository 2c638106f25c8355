"""The torch a file may use, read from its nearest manifest, and the edit that raises it.

A monorepo's subprojects pin torch apart (`torch<2.6` in one of them says nothing about
the others), so each file's constraint comes from the manifests of the nearest folder at
or above it (up to the scanned root) that name torch at all: requirements*.txt (and a
`requirements/` folder beside them), pyproject.toml, setup.py, setup.cfg,
environment.yml. From them come the newest torch allowed (the upper bound: a fix that
needs more is not made) and the oldest one the project says it supports (the lower
bound: a fix that needs more than that is unsafe).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from tpucheck.analyze.manifests import ManifestError, Requirement, is_manifest, parse_manifest
from tpucheck.fix.versions import Version, newest_allowed, oldest_allowed

__all__ = ["Pin", "pin_for", "raise_pin", "torch_pin"]

_SKIP_DIRS = {".git", ".hg", ".venv", "venv", "env", "node_modules", "site-packages", "__pycache__", ".tox", "build", "dist"}


@dataclass(frozen=True, slots=True)
class Pin:
    """What one file's nearest manifest says about torch."""

    newest: Version | None = None
    newest_source: str | None = None
    """`requirements.txt:3: torch==2.4.1`, relative to the scanned root."""
    oldest: Version | None = None
    oldest_source: str | None = None
    path: str | None = None
    """The manifest (relative to the root) with the upper bound, and its line."""
    line: int | None = None


def pin_for(root: str, path: str, cache: dict[str, Pin | None] | None = None) -> Pin:
    """The torch constraint for `path` (relative to `root`): from the manifests of the
    nearest folder at or above the file that name torch. `cache` keeps each folder's
    answer for one run."""
    folder = os.path.dirname(path.replace(os.sep, "/"))
    cache = {} if cache is None else cache
    while True:
        if folder not in cache:
            cache[folder] = _folder_pin(os.path.abspath(root), folder)
        found = cache[folder]
        if found is not None:
            return found
        if not folder:
            return Pin()
        folder = os.path.dirname(folder)


def torch_pin(root: str) -> tuple[Version | None, str | None]:
    """(newest torch allowed, where) for a file at the top of `root`."""
    pin = pin_for(root, "")
    return pin.newest, pin.newest_source


def _folder_pin(root: str, folder: str) -> Pin | None:
    """The torch requirements of the manifests in `folder` (and its `requirements/`), or
    None when none names torch."""
    directory = os.path.join(root, folder) if folder else root
    names: list[str] = []
    for sub in ("", "requirements"):
        where = os.path.join(directory, sub) if sub else directory
        if sub and (not os.path.isdir(where) or sub in _SKIP_DIRS):
            continue
        try:
            entries = sorted(os.listdir(where))
        except OSError:
            continue
        names.extend(f"{sub}/{name}" if sub else name for name in entries if os.path.isfile(os.path.join(where, name)))
    requirements: list[tuple[str, Requirement]] = []
    for name in names:
        relative = f"{folder}/{name}" if folder else name
        if not is_manifest(relative):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                found = parse_manifest(relative, handle.read())
        except (OSError, UnicodeDecodeError, ManifestError):
            continue
        requirements.extend((relative, r) for r in found if r.kind == "package" and r.name == "torch" and r.extra is None)
    if not requirements:
        return None
    newest: tuple[Version, str, str, int] | None = None
    oldest: tuple[Version, str] | None = None
    for relative, requirement in requirements:
        source = f"{relative}:{requirement.line}: {requirement.raw}"
        bound = newest_allowed([requirement.spec])
        if bound is not None and (newest is None or bound < newest[0]):
            newest = (bound, source, relative, requirement.line)
        floor = oldest_allowed([requirement.spec])
        if floor is not None and (oldest is None or floor < oldest[0]):
            oldest = (floor, source)
    return Pin(
        newest[0] if newest else None,
        newest[1] if newest else None,
        oldest[0] if oldest else None,
        oldest[1] if oldest else None,
        newest[2] if newest else None,
        newest[3] if newest else None,
    )


_UPPER = re.compile(r"(===|==|~=|<=|<)\s*([0-9][0-9a-zA-Z.*+!-]*)")


def raise_pin(text: str, line: int, needs: Version) -> str | None:
    """`text` (a manifest) with the torch requirement on `line` allowing `needs`: `==2.0.1`
    -> `==2.6.0`, `<2.6` -> `<2.7`, `<=2.5` -> `<=2.6.0`, `~=2.4.0` -> `~=2.6.0`; None when
    the line holds no bound this can raise. Only the version text changes."""
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines) or "torch" not in lines[line - 1]:
        return None
    current = lines[line - 1]
    at = current.find("torch")
    head, tail = current[:at], current[at:]
    major_minor = needs.parts[:2] if len(needs.parts) >= 2 else (*needs.parts, 0)
    full = ".".join(map(str, (*needs.parts, 0, 0)[:3]))

    def bump(found: re.Match[str]) -> str:
        operator, version = found.group(1), found.group(2)
        base = version.split("+", 1)[0]
        if Version(base.rstrip(".*") or "0") >= needs:
            return found.group(0)
        if operator in ("==", "===", "<=", "~="):
            return f"{operator}{full}"
        return f"<{major_minor[0]}.{major_minor[1] + 1}"

    new_tail, count = _UPPER.subn(bump, tail)
    if count == 0 or new_tail == tail:
        return None
    lines[line - 1] = head + new_tail
    return "".join(lines)
