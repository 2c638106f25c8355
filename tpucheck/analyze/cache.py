"""The incremental cache: one JSON entry per analyzed file, so a rescan parses only what changed.

An entry is keyed by everything that decides a file's `FileResult`: the file's bytes
(SHA-256), its relative path and kinds, and a namespace that hashes the tool (version and
the source of the package, so a development checkout never serves results of older code),
the Python and libcst versions, a stable serialization of the whole loaded `Ruleset`, and
the options that change results (prefilter, the project's first-party packages). Options
that only choose *which* files are analyzed (excludes, gitignore, size limit) stay out.

The default directory sits inside the scanned tree, which may be hostile, so the cache
trusts nothing it reads:

- entries are JSON, never pickle or marshal; every field is type-checked on load, and an
  entry embeds its full key, so a renamed or copied entry is a miss, not another file's
  result. Anything malformed is a miss, never an exception;
- entries are opened with O_NOFOLLOW and O_NONBLOCK and must be regular files under a size
  cap, so a planted symlink, FIFO or device cannot hang or redirect a read;
- the cache's own directories must be real directories, not symlinks, before anything is
  written below them, so a planted link cannot make the scan write outside the cache.

What it cannot prevent: a tree that ships well-formed entries for its own files with
forged results (every input of the key is public). Scan untrusted trees with the cache
off or with a cache directory outside the tree.

Writes go to a temporary file in the entry's directory and are renamed into place, so
concurrent scans and interrupted writes never expose a partial entry; a cache that cannot
be created or written (read-only tree, permissions, disk full) silently stops writing for
the rest of the run and the scan goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import importlib.util
import json
import os
import re
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import tpucheck
from tpucheck.analyze.entry_json import Malformed, result_from_json, result_to_json
from tpucheck.findings import FileResult
from tpucheck.ruleset.model import Ruleset
from tpucheck.ruleset.store import code_digest, user_cache_dir

CACHE_DIRNAME = ".tpucheck_cache"
"""Discovery never walks into a directory of this name (`ALWAYS_SKIPPED_DIRS`)."""

LAYOUT = "v16"
"""Bump when the entry format changes: old entries then live in a directory nobody reads."""

MAX_ENTRY_BYTES = 32 * 1024 * 1024
"""A bigger entry is not one we wrote (a 5 MB file's matches fit many times over)."""

UNCACHED_ERRORS = frozenset({"unreadable", "timeout"})
"""Error kinds that describe the machine or the moment, not the file's bytes."""

CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tpucheck.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n"
)
GITIGNORE = "# Created by tpucheck: nothing here belongs in version control.\n*\n"

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(slots=True)
class CacheStats:
    """What the cache did during one scan. Pass one in `ScanOptions.cache_stats`; the engine
    fills it in (the counts of worker processes included)."""

    enabled: bool = False
    directory: str | None = None
    hits: int = 0
    """Files whose result came from an entry."""
    misses: int = 0
    """Files analyzed with the cache on (no entry, or an unusable one)."""
    written: int = 0
    write_failures: int = 0
    """Entries that could not be written; after the first, the run stops trying."""
    disabled_reason: str | None = None
    """Why a requested cache was not used, or stopped being written."""

    def add(self, other: CacheStats) -> None:
        self.hits += other.hits
        self.misses += other.misses
        self.written += other.written
        self.write_failures += other.write_failures
        if self.disabled_reason is None:
            self.disabled_reason = other.disabled_reason

    def take(self) -> CacheStats:
        """The counts so far, reset to zero: a worker ships its counts back per batch."""
        taken = CacheStats(hits=self.hits, misses=self.misses, written=self.written, write_failures=self.write_failures, disabled_reason=self.disabled_reason)
        self.hits = self.misses = self.written = self.write_failures = 0
        return taken


# --------------------------------------------------------------------------- keys


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stable(value: Any) -> Any:
    """A JSON-able form of rule data that is the same in every process.

    `repr()` is not: frozensets of strings iterate in an order that changes with
    PYTHONHASHSEED. Unknown types fall back to `repr`, which at worst makes every lookup
    miss (an address in a repr), never serves a wrong result.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__, {f.name: _stable(getattr(value, f.name)) for f in dataclasses.fields(value)}]
    if isinstance(value, (tuple, list)):
        return [_stable(item) for item in value]
    if isinstance(value, (frozenset, set)):
        return ["set", sorted((_stable(item) for item in value), key=_canonical)]
    if isinstance(value, dict):
        return ["dict", sorted(([_stable(k), _stable(v)] for k, v in value.items()), key=_canonical)]
    if isinstance(value, re.Pattern):
        return ["re", value.pattern if isinstance(value.pattern, str) else repr(value.pattern), int(value.flags)]
    return ["repr", type(value).__name__, repr(value)]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ruleset_digest(ruleset: Ruleset) -> str:
    """Of every field of the loaded rules, contexts and optional-path markers."""
    return _sha256(_canonical(_stable(ruleset)).encode("utf-8"))


def _libcst_version() -> str:
    """What identifies the installed libcst: its version file's bytes. Read, not imported:
    a rescan served from the cache never loads libcst (a tenth of a second)."""
    spec = importlib.util.find_spec("libcst")
    if spec is None or spec.origin is None:
        return "unknown"
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "_version.py"), "rb") as handle:
            return _sha256(handle.read())
    except OSError:
        return "unknown"


SECRET_ENV = "TPUCHECK_CACHE_SECRET"


def _secret_path() -> str:
    return os.path.join(user_cache_dir(), "cache-secret")


def machine_secret() -> str | None:
    """A random secret kept outside every scanned tree (or given in TPUCHECK_CACHE_SECRET),
    mixed into the namespace so that a repository cannot ship forged entries for its own
    files: without the secret it cannot know the namespace its entries would need. None
    when there is no secret and none can be made (no writable home): then no cache."""
    given = os.environ.get(SECRET_ENV)
    if given:
        return _sha256(given.encode("utf-8", "surrogateescape"))
    path = _secret_path()
    value = _read_secret(path)
    if value is None:
        _make_secret(path)
        value = _read_secret(path)
    return None if value is None else _sha256(value)


def _read_secret(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_BINARY)
    except OSError:
        return None
    try:
        value = os.read(fd, 256)
    except OSError:
        return None
    finally:
        os.close(fd)
    return value if len(value) >= 32 else None


def _make_secret(path: str) -> None:
    """Written to a temporary file and hard-linked into place, so the secret appears whole
    or not at all, and the first of two racing scans wins for both."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".secret-", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_hex(32).encode("ascii"))
        os.link(temp, path)
    except OSError:
        pass  # FileExistsError: another scan made it first, and theirs is read
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def namespace(ruleset: Ruleset, *, prefilter: bool, first_party: Iterable[str], secret: str = "") -> str:
    """The part of every key shared by all files of one scan."""
    parts = {
        "secret": secret,
        "layout": LAYOUT,
        "version": tpucheck.__version__,
        "code": code_digest(),
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "libcst": _libcst_version(),
        "ruleset": ruleset_digest(ruleset),
        "prefilter": bool(prefilter),
        "first_party": sorted(first_party),
    }
    return _sha256(_canonical(parts).encode("utf-8"))


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True, slots=True)
class EntryKey:
    """Which file, with which bytes, in which namespace: embedded in the entry it names."""

    namespace: str
    path: str
    kinds: tuple[str, ...]
    content: str
    """SHA-256 of the file's bytes."""

    def as_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "path": self.path, "kinds": list(self.kinds), "sha256": self.content}

    def digest(self) -> str:
        """NUL separates the parts: no path or kind contains one."""
        text = "\0".join((self.namespace, self.path, ",".join(self.kinds), self.content))
        return _sha256(text.encode("utf-8", "surrogateescape"))


# --------------------------------------------------------------------------- the cache


class ResultCache:
    """Entries of one namespace in one cache directory. Picklable: it holds only paths and
    flags, so spawned workers get a working copy; each process counts in its own `stats`."""

    def __init__(self, directory: str, namespace_digest: str, *, stats: CacheStats | None = None) -> None:
        self.directory = directory
        self.namespace = namespace_digest
        self.entries = os.path.join(directory, LAYOUT, namespace_digest[:16])
        self.stats = stats if stats is not None else CacheStats()
        self.stats.enabled = True
        self.stats.directory = directory
        self.writable = True
        self._checked_dirs: set[str] = set()
        self._buffer = bytearray(1 << 20)
        self.content: dict[str, str] = {}
        """Path -> SHA-256 of the bytes this process read for it (lookups and peeks): the
        inputs of the whole tree's facts (`tree_key`)."""

    @classmethod
    def for_scan(
        cls,
        root: str,
        ruleset: Ruleset,
        *,
        prefilter: bool,
        first_party: Iterable[str],
        directory: str | None = None,
        stats: CacheStats | None = None,
    ) -> ResultCache | None:
        """The cache of a scan of `root`, or None when there is nowhere to keep one.

        The default directory is `<root>/.tpucheck_cache`; for a single-file root there is
        no default (a scan of one file should not litter the folder it sits in). A default
        directory that is a symlink is refused: the tree may have planted it.
        """
        if directory is None:
            if not os.path.isdir(root):
                if stats is not None:
                    stats.disabled_reason = "no default cache directory for a single-file scan"
                return None
            directory = os.path.join(root, CACHE_DIRNAME)
            if os.path.islink(directory):
                if stats is not None:
                    stats.disabled_reason = f"{directory} is a symlink"
                return None
        secret = machine_secret()
        if secret is None:
            if stats is not None:
                stats.disabled_reason = f"no cache secret: cannot create {_secret_path()} (set {SECRET_ENV})"
            return None
        return cls(os.path.abspath(directory), namespace(ruleset, prefilter=prefilter, first_party=first_party, secret=secret), stats=stats)

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": self.directory, "namespace": self.namespace, "writable": self.writable}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["directory"], state["namespace"])  # type: ignore[misc]
        self.writable = state["writable"]

    def key(self, path: str, kinds: tuple[str, ...], data: bytes) -> EntryKey:
        content = self.content[path] = _sha256(data)
        return EntryKey(self.namespace, path, tuple(kinds), content)

    def _entry_path(self, digest: str) -> tuple[str, str]:
        folder = os.path.join(self.entries, digest[:2])
        return folder, os.path.join(folder, digest + ".json")

    # ------------------------------------------------------------------ read

    def load(self, key: EntryKey) -> FileResult | None:
        """The stored result for this key, or None (counted as a miss). Never raises for
        anything found on disk."""
        result = self._load(key)
        if result is None:
            self.stats.misses += 1
        else:
            self.stats.hits += 1
        return result

    def lookup(self, path: str, kinds: tuple[str, ...], abspath: str) -> FileResult | None:
        """Read and hash the file and load its entry: the engine's pre-pass before any
        worker starts. An unreadable file is a miss; its analysis reports why."""
        try:
            content = self.content[path] = _file_sha256(abspath, self._buffer)
        except OSError:
            self.stats.misses += 1
            return None
        return self.load(EntryKey(self.namespace, path, tuple(kinds), content))

    def peek(self, path: str, kinds: tuple[str, ...], abspath: str) -> FileResult | None:
        """`lookup` without counting: for a file this run does not analyze (the import
        graph of a shard's whole tree), whose entry a full scan may have left."""
        try:
            content = self.content[path] = _file_sha256(abspath, self._buffer)
        except OSError:
            return None
        return self._load(EntryKey(self.namespace, path, tuple(kinds), content))

    def _load(self, key: EntryKey) -> FileResult | None:
        entry = self._read_entry(key.digest(), key.as_json(), "result")
        if entry is None:
            return None
        try:
            return result_from_json(key.path, key.kinds[0] if key.kinds else "other", entry)
        except (ValueError, TypeError, RecursionError, Malformed):
            return None

    def _read_entry(self, digest: str, key: dict[str, Any], field: str) -> Any:
        """The `field` of the entry stored under `digest`, when the entry is a regular
        file under the size cap holding exactly {"key": key, field: ...}; else None."""
        _, path = self._entry_path(digest)
        try:
            fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_BINARY)
        except (OSError, ValueError):
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            raw = _read_all(fd, info.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        if type(entry) is not dict or set(entry) != {"key", field} or entry["key"] != key:
            return None
        return entry[field]

    def tree_key(self, files: Iterable[tuple[str, tuple[str, ...]]], extra: str = "") -> str | None:
        """The key of the whole tree's facts: every file's path, kinds and bytes, and `extra`
        (the text of files that are not scanned but say something of the tree: `.gitmodules`),
        in this namespace (tool, rules, options). None when a file's bytes were not read
        this run (a shard, an unreadable file): the facts are then computed, never served."""
        parts = [self.namespace, "tree", _sha256(extra.encode("utf-8", "surrogateescape"))]
        for path, kinds in sorted(files):
            content = self.content.get(path)
            if content is None:
                return None
            parts.append(f"{path}\0{','.join(kinds)}\0{content}")
        return _sha256("\0".join(parts).encode("utf-8", "surrogateescape"))

    def load_tree(self, key: str) -> Any:
        """The stored JSON of the tree's facts under `key`, or None; the caller checks its shape."""
        return self._read_entry(key, {"namespace": self.namespace, "tree": key}, "tree")

    def store_tree(self, key: str, facts: Any) -> None:
        self._write(key, {"key": {"namespace": self.namespace, "tree": key}, "tree": facts})

    # ------------------------------------------------------------------ write

    def cacheable(self, result: FileResult) -> bool:
        return result.error is None or result.error.kind not in UNCACHED_ERRORS

    def store(self, key: EntryKey, result: FileResult) -> None:
        """Write the entry atomically; a failure turns writing off for the rest of the run."""
        if self.cacheable(result) and self._write(key.digest(), {"key": key.as_json(), "result": result_to_json(result)}):
            self.stats.written += 1

    def _write(self, digest: str, entry: dict[str, Any]) -> bool:
        """Whether the entry was written (`stats.written` counts files' entries only)."""
        if not self.writable:
            return False
        folder, path = self._entry_path(digest)
        payload = _canonical(entry).encode("utf-8")
        try:
            self._prepare(folder)
            _atomic_write(folder, path, payload)
        except OSError as exc:
            self.stats.write_failures += 1
            self.writable = False
            self.stats.disabled_reason = f"cannot write the cache: {exc.strerror or exc}"
            return False
        return True

    def _prepare(self, folder: str) -> None:
        """Create the cache's directories, each checked to be a real directory (a planted
        symlink must not redirect our writes), plus CACHEDIR.TAG and .gitignore."""
        if folder in self._checked_dirs:
            return
        if self.entries not in self._checked_dirs:
            os.makedirs(self.directory, exist_ok=True)
            _real_dir(self.directory)
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                marker = os.path.join(self.directory, name)
                if not os.path.lexists(marker):
                    _atomic_write(self.directory, marker, text.encode("utf-8"))
            _make_real_dir(os.path.join(self.directory, LAYOUT))
            _make_real_dir(self.entries)
            self._checked_dirs.add(self.entries)
        _make_real_dir(folder)
        self._checked_dirs.add(folder)


def _file_sha256(path: str, buffer: bytearray) -> str:
    """Hash through one reused buffer: reading whole files into fresh bytes objects costs
    more in page faults than the hashing (a warm rescan reads every file)."""
    hasher = hashlib.sha256()
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while count := handle.readinto(buffer):
            hasher.update(view[:count])
    return hasher.hexdigest()


def _read_all(fd: int, size: int) -> bytes:
    """The `size` bytes fstat reported (capped by the caller). Entries are replaced by
    rename, never rewritten in place, so an open entry does not grow; one that a hostile
    tree truncates meanwhile is short, hence invalid JSON, hence a miss."""
    chunks = []
    total = 0
    while total < size:
        chunk = os.read(fd, size - total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _real_dir(path: str) -> None:
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(errno.ENOTDIR, "not a directory (or a symlink)", path)


def _make_real_dir(path: str) -> None:
    with contextlib.suppress(FileExistsError):
        os.mkdir(path)
    _real_dir(path)


def _atomic_write(folder: str, path: str, payload: bytes) -> None:
    """Temporary file in the same directory, then rename: readers see all or nothing.
    `mkstemp` uses O_EXCL (never follows a planted link) and rename replaces a link at
    the destination rather than writing through it."""
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
