"""The root README's text: the commands it documents are how a user runs the product
(judge/entrypoints.py `documented_paths`). Read, never executed; not a scanned file, so the
tree's cache key covers its text."""

from __future__ import annotations

import os

__all__ = ["README_NAMES", "readme_text"]

README_NAMES = ("README.md", "readme.md", "Readme.md", "README.rst", "README.txt", "README")
"""The names a root README goes by, in the order they are tried."""


def readme_text(root: str) -> tuple[str, str]:
    """(name, text) of the root's README (its first MiB), or ("", "") when there is none."""
    for name in README_NAMES:
        try:
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                return name, handle.read(1 << 20)
        except OSError:
            continue
    return "", ""
