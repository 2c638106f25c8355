"""The paths git tracks in a work tree, read from `.git/index` itself.

Why: git never applies `.gitignore` to a file it already tracks, so a project can commit
a `.cuh` header that a broad `*.cuh` or `build*/` pattern would otherwise hide; a scan
that honours only the ignore files misses that code (issue 12 point 5). Asking git
(`git ls-files`) would mean running a program under the scanned repository's own
configuration, which can name commands to run (`core.fsmonitor`); tpucheck never runs
anything on behalf of the scanned code, so the index file is parsed here instead. The
format is documented in git's `Documentation/gitformat-index.txt`.

Anything unexpected (no index, a version or extension we do not read, a truncated file)
gives `None`, and the caller walks the tree as if git were not there: the tracked set only
ever adds files back, so the fallback loses nothing the plain walk would have found.
"""

from __future__ import annotations

import os
import struct

__all__ = ["git_dir", "tracked_paths"]

_SIGNATURE = b"DIRC"
_HEADER = struct.Struct(">4sII")
_ENTRY_FIXED = 62
"""ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each), object id (20),
flags (2): the part of an entry before its path, with SHA-1 object ids."""
_EXTENDED_FLAG = 0x4000
_STAGE_MASK = 0x3000
_SKIP_WORKTREE = 0x4000  # in the extended flags (version 3 and later)
_SPLIT_INDEX_EXT = b"link"
_SPARSE_DIR_MODE = 0o040000
_GITLINK_MODE = 0o160000  # a submodule: a directory holding another repository


def git_dir(worktree: str) -> str | None:
    """The repository directory of a work tree's root: `.git`, or where a `.git` file
    (`gitdir: ...`, as in linked work trees and submodules) points."""
    dot_git = os.path.join(worktree, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    if not os.path.isfile(dot_git):
        return None
    try:
        with open(dot_git, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:") :].strip()
    target = target if os.path.isabs(target) else os.path.join(worktree, target)
    return target if os.path.isdir(target) else None


def tracked_paths(worktree: str) -> frozenset[str] | None:
    """Paths (relative, '/'-separated) of the files tracked in stage 0 of `worktree`'s
    index and present in its work tree, or None when it is not a git work tree or the
    index is not one we read."""
    repo = git_dir(worktree)
    if repo is None:
        return None
    try:
        with open(os.path.join(repo, "index"), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    try:
        return frozenset(_parse(data))
    except (ValueError, struct.error, UnicodeDecodeError):
        return None


def _parse(data: bytes) -> list[str]:
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != _SIGNATURE or version not in (2, 3, 4):
        raise ValueError("not an index we read")
    offset = _HEADER.size
    previous = b""
    paths: list[str] = []
    for _ in range(count):
        if offset + _ENTRY_FIXED > len(data):
            raise ValueError("truncated index")
        mode = struct.unpack_from(">I", data, offset + 24)[0]
        flags = struct.unpack_from(">H", data, offset + 60)[0]
        cursor = offset + _ENTRY_FIXED
        extended = 0
        if flags & _EXTENDED_FLAG:
            if version < 3:
                raise ValueError("extended flag in a version 2 index")
            extended = struct.unpack_from(">H", data, cursor)[0]
            cursor += 2
        if version == 4:
            strip, cursor = _varint(data, cursor)
            end = data.index(b"\0", cursor)
            if strip > len(previous):
                raise ValueError("bad path compression")
            path = previous[: len(previous) - strip] + data[cursor:end]
            offset = end + 1
        else:
            end = data.index(b"\0", cursor)
            path = data[cursor:end]
            # Entries are padded with 1 to 8 NULs to a multiple of 8 bytes from their start.
            length = end - offset
            offset += (length + 8) & ~7
        previous = path
        if flags & _STAGE_MASK or extended & _SKIP_WORKTREE or mode in (_SPARSE_DIR_MODE, _GITLINK_MODE):
            continue  # conflict stages, sparse checkout, submodules: not files of this tree
        paths.append(path.decode("utf-8"))
    if data[offset : offset + 4] == _SPLIT_INDEX_EXT or _has_extension(data, offset, _SPLIT_INDEX_EXT):
        raise ValueError("split index: the shared part is elsewhere")
    return paths


def _has_extension(data: bytes, offset: int, name: bytes) -> bool:
    """Extensions follow the entries as (4-byte name, 4-byte size, payload); the last 20
    bytes are the checksum."""
    end = len(data) - 20
    while offset + 8 <= end:
        ext, size = struct.unpack_from(">4sI", data, offset)
        if ext == name:
            return True
        offset += 8 + size
    return False


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    """Git's offset encoding (not LEB128): each continuation adds one before shifting."""
    byte = data[offset]
    offset += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[offset]
        offset += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset
