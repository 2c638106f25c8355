"""The repository's git submodules, from its `.gitmodules`: other repositories pinned at a
commit inside this one (a vendored CUDA library, a dependency's source tree).

Why: a recursive clone holds them, so a scan reads them, but porting a third-party
repository's internals is not the product's work: the product's own imports and builds of
it are. The judgement prices their findings apart, as it does experimental code
(`Roles.optional`). Read on every run (one small file), never executed.
"""

from __future__ import annotations

import os
import re

__all__ = ["gitmodules_text", "parse_submodules", "read_submodules"]

_SECTION = re.compile(r'^\s*\[submodule\s+"(?P<name>[^"]*)"\s*\]\s*$')
_VALUE = re.compile(r"^\s*(?P<key>path|url)\s*=\s*(?P<value>.*?)\s*$")


def gitmodules_text(root: str) -> str:
    """The root's `.gitmodules` (its first MiB), or "" when there is none to read."""
    try:
        with open(os.path.join(root, ".gitmodules"), encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return ""


def read_submodules(root: str) -> dict[str, str]:
    return parse_submodules(gitmodules_text(root))


def parse_submodules(text: str) -> dict[str, str]:
    """Submodule path (relative, `/`-separated, no trailing slash) -> its URL ("" when the
    file names none)."""
    found: dict[str, str] = {}
    path = url = None
    for line in [*text.splitlines(), '[submodule ""]']:
        if _SECTION.match(line):
            if path:
                found[path.strip("/").replace("\\", "/")] = url or ""
            path = url = None
            continue
        value = _VALUE.match(line)
        if value is not None:
            if value.group("key") == "path":
                path = value.group("value").strip('"')
            else:
                url = value.group("value").strip('"')
    return {p: u for p, u in sorted(found.items()) if p and not p.startswith("..") and not os.path.isabs(p)}
