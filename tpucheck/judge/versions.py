"""Older versions of the product kept beside the newest (`RWKV-v4/`, `RWKV-v5/`, `RWKV-v7/`):
ported once, in the newest; the older ones are history, set aside with their reason.

Recognised by structure, not by one repository's names: sibling folders whose names differ
only in a version number (rules/judgement.yaml `versions.folder`) and that hold largely the
same files (`versions.overlap` of their file names in common). A single `v2/` folder, or
versions that share nothing, are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from tpucheck.findings import Reason
from tpucheck.ruleset.judgement import Judgement

__all__ = ["older_versions"]


def older_versions(paths: Iterable[str], judgement: Judgement) -> dict[str, Reason]:
    """Folder -> why it is an older version of a product whose newest version is kept."""
    pattern = judgement.version_folder
    if pattern is None:
        return {}
    files: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            files.setdefault(folder, set()).add("/".join(parts[depth:]))
    families: dict[tuple[str, str], list[tuple[tuple[float, str], str]]] = {}
    for folder in files:
        parent, _, name = folder.rpartition("/")
        found = pattern.fullmatch(name)
        if found is None:
            continue
        version = (float(found.group("version")), found.group("tag"))
        families.setdefault((parent, found.group("stem").lower()), []).append((version, folder))
    out: dict[str, Reason] = {}
    for members in families.values():
        if len(members) < 2:
            continue
        members.sort()
        newest = members[-1][1]
        for _, folder in members[:-1]:
            names = {p.rpartition("/")[2] for p in files[folder]} & {p.rpartition("/")[2] for p in files[newest]}
            if len(names) >= 2 and len(names) >= judgement.version_overlap * min(len(files[folder]), len(files[newest])):
                out[folder] = Reason("version.older", f"{folder} is an older version of {newest} (the newest is ported)")
    return out
