"""The newest torch a project's manifests allow, read with tpucheck's manifest parsers."""

from __future__ import annotations

import os

from tpucheck.analyze.manifests import ManifestError, is_manifest, parse_manifest
from tpucheck.fix.versions import Version, newest_allowed

__all__ = ["torch_pin"]

_SKIP_DIRS = {".git", ".hg", ".venv", "venv", "env", "node_modules", "site-packages", "__pycache__", ".tox", "build", "dist"}
_DEPTH = 2
"""Manifests sit at the top of a project or one or two folders down (`requirements/`)."""


def torch_pin(root: str) -> tuple[Version | None, str | None]:
    """(newest torch allowed, where that bound is written) over the manifests within two
    folders of `root`; (None, None) when none bounds torch from above."""
    best: tuple[Version, str] | None = None
    start = root if os.path.isdir(root) else os.path.dirname(root) or "."
    for directory, dirs, files in os.walk(start):
        depth = os.path.relpath(directory, start).count(os.sep) + (0 if directory == start else 1)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")) if depth < _DEPTH else []
        for name in sorted(files):
            relative = os.path.relpath(os.path.join(directory, name), start).replace(os.sep, "/")
            if not is_manifest(relative):
                continue
            try:
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    requirements = parse_manifest(relative, handle.read())
            except (OSError, UnicodeDecodeError, ManifestError):
                continue
            for requirement in requirements:
                if requirement.kind != "package" or requirement.name != "torch":
                    continue
                bound = newest_allowed([requirement.spec])
                if bound is not None and (best is None or bound < best[0]):
                    best = (bound, f"{relative}:{requirement.line}: {requirement.raw}")
    return (best[0], best[1]) if best else (None, None)
