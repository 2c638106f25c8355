"""The scanned project's own top-level package names: an import of one is the project's
code, never a rule's package of the same name."""

from __future__ import annotations

import os

__all__ = ["first_party_packages"]


def first_party_packages(root: str) -> frozenset[str]:
    """The scanned project's own top-level packages: `pkg/__init__.py` or
    `src/pkg/__init__.py` under the root. Read from the file system rather than from the
    files discovered, so that a scan of a few files (pre-commit) or of one shard knows them too."""
    names: set[str] = set()
    for parent in (root, os.path.join(root, "src")):
        try:
            entries = os.listdir(parent)
        except OSError:
            continue
        names.update(name for name in entries if name.isidentifier() and os.path.isfile(os.path.join(parent, name, "__init__.py")))
    return frozenset(names)
