"""Walk a tree and list the files the analyzers should look at.

This is the first stage of the scan pipeline and the only one that touches the directory
tree, so it carries the responsibility for everything that must be decided *before* any
file is opened: what is ours to analyze (gitignore, `--exclude`, virtual environments and
build output are not), what is unsafe to follow (symlinks leaving the root, cycles), and
what is too big to be worth parsing. It never reads a file's contents (except ignore
files, which are walk configuration) and never executes anything.

Everything the caller does not get as a `SourceFile` is either silent by design (no
analyzer cares about the file, or it is ignored) or reported in `skipped`/`errors`, so
that a report can say honestly what was not looked at.
"""

from __future__ import annotations

import errno
import functools
import heapq
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import pathspec

from tpucheck.discover.gitindex import tracked_paths
from tpucheck.discover.manifest_names import is_manifest
from tpucheck.findings import ScanError, Skipped

__all__ = [
    "ALWAYS_SKIPPED_DIRS",
    "DEFAULT_MAX_FILE_SIZE",
    "KINDS",
    "Discovery",
    "SourceFile",
    "classify",
    "discover",
    "display_path",
]

DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024
"""Generated or vendored blobs above this are not hand-written code worth a finding, and
parsing them would dominate the scan time."""

KINDS: tuple[str, ...] = ("python", "notebook", "native", "manifest", "other")
"""Every kind, in the order a `SourceFile.kinds` tuple lists them."""

ALWAYS_SKIPPED_DIRS: frozenset[str] = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr",
        "node_modules", "__pycache__",
        ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints",
        ".eggs", "build", "dist", "site-packages",
        ".tpucheck_cache", ".idea", ".vscode",
    }
)  # fmt: skip
"""Directory names that never hold the project's own source: third-party code, caches and
build output would drown the real findings (and cost most of the walk time)."""

NATIVE_EXTENSIONS = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx")
"""C, C++ and CUDA sources and headers: the files of kind "native"."""

_EXTENSION_KIND: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".ipynb": "notebook",
    **{ext: "native" for ext in NATIVE_EXTENSIONS},
}

_SYMLINK_OUTSIDE = "symlink outside the scanned root"
_BROKEN_ERRNOS = frozenset({errno.ENOENT, errno.ELOOP, errno.ENOTDIR})
_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to analyze."""

    path: str
    """Relative to the scanned root with '/' separators (for a single-file root: its name).
    This is what reports show and fingerprints hash, so it must not depend on the machine."""
    abspath: str
    """What to open. For a file reached through a symlink inside the root, the link's path:
    opening it is equivalent and it keeps `path` and `abspath` describing the same route."""
    kinds: tuple[str, ...]
    """Analyses to run, in `KINDS` order."""
    size: int


@dataclass(slots=True)
class Discovery:
    """The walk's result; every list is sorted by path so two scans compare equal."""

    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[ScanError] = field(default_factory=list)


# --------------------------------------------------------------------------- classify


def _compile(patterns: Sequence[str]) -> pathspec.GitIgnoreSpec | None:
    """None when no line is a real pattern, so callers can skip matching altogether."""
    spec = pathspec.GitIgnoreSpec.from_lines(list(patterns))
    if not any(p.include is not None for p in spec.patterns):
        return None
    return spec


@lru_cache(maxsize=32)
def _compiled_globs(globs: tuple[str, ...]) -> pathspec.GitIgnoreSpec | None:
    """`classify` is public and called per file; compiling its globs each call would be
    the single most expensive thing in the walk."""
    return _compile(globs)


def _classify(relpath: str, globs: pathspec.GitIgnoreSpec | None) -> tuple[str, ...]:
    name = relpath.rpartition("/")[2]
    kinds: list[str] = []
    dot = name.rfind(".")
    if dot >= 0:
        kind = _EXTENSION_KIND.get(name[dot:])
        if kind is not None:
            kinds.append(kind)
    if is_manifest(relpath):
        kinds.append("manifest")
    if globs is not None and globs.check_file(relpath).include:
        kinds.append("other")
    return tuple(kinds)


def classify(relpath: str, extra_globs: Sequence[str] = ()) -> tuple[str, ...]:
    """Kinds for a relative path ('/' separators); () when nothing analyzes it.

    Decided by the path alone so that the walk never has to open a file to know whether it
    matters. Extensions match case-sensitively, as on the file systems the targets are
    built on (`.C` is C++ to gcc); manifest names as `manifest_names` says, the one list
    the parsers use too (`Setup.py` is not what pip runs, `Requirements.txt` is what `-r`
    names).
    """
    return _classify(relpath, _compiled_globs(tuple(extra_globs)))


# --------------------------------------------------------------------------- walk


@dataclass(slots=True)
class _Dir:
    """A directory waiting to be listed, reached by one route from the root."""

    abspath: str
    rel: str
    """Relative path with a trailing '/', or '' for the root."""
    real: str
    """Resolved path: cycle and duplicate detection, and the base for children's real
    paths, so that only symlinks ever need `realpath`."""
    layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
    """Ignore specs in force, shallowest first, each with the relative directory (trailing
    '/') its patterns are relative to."""
    only_tracked: bool = False
    """Gitignored, and walked only because git tracks files inside: as in git, nothing
    untracked below it counts."""


@dataclass(slots=True)
class _Candidate:
    path: str
    abspath: str
    kinds: tuple[str, ...]
    size: int
    real: str
    via_link: bool


def _ancestors(paths: frozenset[str]) -> frozenset[str]:
    """Every directory ('/'-terminated) that holds one of `paths`."""
    dirs: set[str] = set()
    for path in paths:
        cut = path.rfind("/")
        while cut > 0:
            prefix = path[: cut + 1]
            if prefix in dirs:
                break
            dirs.add(prefix)
            cut = path.rfind("/", 0, cut)
    return frozenset(dirs)


def display_path(path: str) -> str:
    """The path as reports show it: printable, and encodable as UTF-8.

    On Linux a file name is bytes. Those that are not UTF-8 reach Python as lone
    surrogates (PEP 383), which no report can write and no fingerprint can hash, and
    control characters (an escape sequence, a newline, a right-to-left override) would
    act on the terminal or the document that shows them. Both are spelled as Python
    escapes (`caf\\xe9.py`, `a\\x1b[2Jb.py`); an ordinary name is returned unchanged.
    What is opened is `SourceFile.abspath`, never this.
    """
    if path.isascii() and path.isprintable():
        return path
    out = []
    for char in path:
        if "\udc80" <= char <= "\udcff":
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        elif char.isprintable():
            out.append(char)
        else:
            out.append(char.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def _format_size(size: int, limit: int) -> tuple[str, str]:
    """Human sizes, falling back to bytes when rounding would make them look equal."""

    def human(n: int) -> str:
        if n >= _MB:
            return f"{n / _MB:.1f} MB"
        if n >= 1024:
            return f"{n / 1024:.1f} KB"
        return f"{n} bytes"

    size_text, limit_text = human(size), human(limit)
    if size_text == limit_text:
        return f"{size} bytes", f"{limit} bytes"
    return size_text, limit_text


def _too_big_reason(size: int, limit: int) -> str:
    size_text, limit_text = _format_size(size, limit)
    return f"larger than the {limit_text} limit ({size_text})"


class _Walker:
    """State of one `discover` call; a class only to keep the per-entry code flat."""

    def __init__(
        self,
        root_abs: str,
        root_real: str,
        exclude: pathspec.GitIgnoreSpec | None,
        respect_gitignore: bool,
        max_file_size: int,
        globs: pathspec.GitIgnoreSpec | None,
        tracked: frozenset[str] | None = None,
    ) -> None:
        self.root_abs = root_abs
        self.tracked: frozenset[str] = tracked or frozenset()
        self.tracked_dirs: frozenset[str] = _ancestors(self.tracked)
        self.root_real = root_real
        self.root_prefix = root_real if root_real.endswith(os.sep) else root_real + os.sep
        self.exclude = exclude
        self.respect_gitignore = respect_gitignore
        self.max_file_size = max_file_size
        self.globs = globs
        self.visited: set[str] = set()
        self.candidates: list[_Candidate] = []
        self.skipped: list[Skipped] = []
        self.errors: list[ScanError] = []
        self.stack: list[_Dir] = []
        # Directories reached through a symlink wait here until every real route has been
        # walked, so content is reported under its real path, not under whichever link
        # happens to sort first. Keyed by path: among links, the smallest path wins.
        self.deferred: list[tuple[str, int, _Dir]] = []
        self._deferred_seq = 0

    # ----------------------------------------------------------------- ignore rules

    def _ignored(self, rel: str, is_dir: bool, layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]) -> bool:
        """Whether `--exclude` or the gitignore files in force drop this path.

        Git's precedence: the deepest ignore file with a matching pattern decides, and
        within a file the last matching pattern (which `check_file` reports). A directory
        is checked with a trailing '/' so that `build/`-style patterns only match dirs.
        `--exclude` is the user's word and drops tracked files too; gitignore never applies
        to a file git tracks, nor prunes a directory that holds one.
        """
        probe = rel + "/" if is_dir else rel
        if self.exclude is not None and self.exclude.check_file(probe).include:
            return True
        if probe in (self.tracked_dirs if is_dir else self.tracked):
            return False
        return self._gitignored(probe, layers)

    @staticmethod
    def _gitignored(probe: str, layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]) -> bool:
        for base, spec in reversed(layers):
            verdict = spec.check_file(probe[len(base) :]).include
            if verdict is not None:
                return verdict
        return False

    def _read_ignore_file(self, abspath: str, rel: str) -> pathspec.GitIgnoreSpec | None:
        try:
            with open(abspath, encoding="utf-8", errors="surrogateescape") as handle:
                lines = handle.read().splitlines()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.errors.append(ScanError(rel, "unreadable", f"cannot read ignore file: {exc.strerror or exc}"))
            return None
        return _compile(lines)

    def root_layers(self) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
        """`.git/info/exclude` ranks below every `.gitignore`, so it goes first.

        The user's global excludes file (core.excludesFile) is deliberately not read: a
        scan must give the same result on every machine and in CI.
        """
        if not self.respect_gitignore:
            return ()
        info = os.path.join(self.root_abs, ".git", "info", "exclude")
        if not os.path.isfile(info):
            return ()
        spec = self._read_ignore_file(info, ".git/info/exclude")
        return (("", spec),) if spec is not None else ()

    # ----------------------------------------------------------------- traversal

    def push_deferred(self, directory: _Dir) -> None:
        self._deferred_seq += 1
        heapq.heappush(self.deferred, (directory.rel, self._deferred_seq, directory))

    def run(self, root: _Dir) -> None:
        self.stack.append(root)
        while True:
            if self.stack:
                directory = self.stack.pop()
            elif self.deferred:
                directory = heapq.heappop(self.deferred)[2]
            else:
                return
            if directory.real in self.visited:
                continue  # a cycle, or a second route to a directory already walked
            self.visited.add(directory.real)
            self._walk_dir(directory, is_root=directory is root)

    def _list(self, directory: _Dir) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(directory.abspath) as iterator:
                entries = list(iterator)
        except OSError as exc:
            path = directory.rel.rstrip("/") or "."
            self.errors.append(ScanError(path, "unreadable", f"cannot list directory: {exc.strerror or exc}"))
            return None
        entries.sort(key=lambda entry: entry.name)
        return entries

    def _walk_dir(self, directory: _Dir, *, is_root: bool) -> None:
        entries = self._list(directory)
        if entries is None:
            return
        names = {entry.name: entry for entry in entries}
        if not is_root and "pyvenv.cfg" in names:
            return  # a virtual environment under another name: third-party code
        layers = directory.layers
        ignore_entry = names.get(".gitignore") if self.respect_gitignore else None
        if ignore_entry is not None and ignore_entry.is_file():
            spec = self._read_ignore_file(ignore_entry.path, directory.rel + ".gitignore")
            if spec is not None:
                layers = (*layers, (directory.rel, spec))
        real_prefix = directory.real if directory.real.endswith(os.sep) else directory.real + os.sep
        subdirs: list[_Dir] = []
        for entry in entries:
            rel = directory.rel + entry.name
            try:
                is_link = entry.is_symlink()
                if is_link:
                    if directory.only_tracked and rel not in self.tracked:
                        continue
                    self._symlink(entry, rel, layers)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if self._dir_pruned(entry.name, rel, layers, directory.only_tracked):
                        continue
                    only_tracked = directory.only_tracked or self._gitignored(rel + "/", layers)
                    subdirs.append(_Dir(entry.path, rel + "/", real_prefix + entry.name, layers, only_tracked))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue  # fifos, sockets, devices: never source
                kinds = _classify(rel, self.globs)
                if not kinds or self._ignored(rel, False, layers):
                    continue
                if directory.only_tracked and rel not in self.tracked:
                    continue
                size = entry.stat(follow_symlinks=False).st_size
            except OSError as exc:
                self.errors.append(ScanError(rel, "unreadable", f"cannot stat: {exc.strerror or exc}"))
                continue
            self.candidates.append(_Candidate(rel, entry.path, kinds, size, real_prefix + entry.name, False))
        # Reversed so that the stack pops them in name order: not needed for the output
        # (sorted at the end) but it keeps the walk itself easy to reason about.
        self.stack.extend(reversed(subdirs))

    def _dir_pruned(self, name: str, rel: str, layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...], only_tracked: bool = False) -> bool:
        if name in ALWAYS_SKIPPED_DIRS or name.endswith(".egg-info"):
            return True
        if only_tracked and rel + "/" not in self.tracked_dirs:
            return True
        return self._ignored(rel, True, layers)

    def _symlink(self, entry: os.DirEntry[str], rel: str, layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]) -> None:
        """Follow a link only into the root; report it when it cannot or must not be."""
        try:
            target_stat = entry.stat(follow_symlinks=True)
        except OSError as exc:
            if self._ignored(rel, False, layers):
                return
            if exc.errno in _BROKEN_ERRNOS:
                try:
                    target = display_path(os.readlink(entry.path))
                except OSError:
                    target = "?"
                if exc.errno == errno.ELOOP:
                    message = f"symlink loop (too many levels of symbolic links): {target}"
                else:
                    message = f"symlink target does not exist: {target}"
                self.errors.append(ScanError(rel, "broken-symlink", message))
            else:
                self.errors.append(ScanError(rel, "unreadable", f"cannot stat symlink target: {exc.strerror or exc}"))
            return
        is_dir = stat.S_ISDIR(target_stat.st_mode)
        if is_dir:
            if self._dir_pruned(entry.name, rel, layers):
                return
            kinds: tuple[str, ...] = ()
        else:
            if not stat.S_ISREG(target_stat.st_mode):
                return
            kinds = _classify(rel, self.globs)
            # A link to a file nobody analyzes is not worth a "skipped" line either.
            if not kinds or self._ignored(rel, False, layers):
                return
        real = os.path.realpath(entry.path)
        if real != self.root_real and not real.startswith(self.root_prefix):
            self.skipped.append(Skipped(rel, _SYMLINK_OUTSIDE))
            return
        if is_dir:
            self.push_deferred(_Dir(entry.path, rel + "/", real, layers))
        else:
            self.candidates.append(_Candidate(rel, entry.path, kinds, target_stat.st_size, real, True))

    # ----------------------------------------------------------------- result

    def result(self) -> Discovery:
        """Resolve files reached by several routes, apply the size limit, sort.

        The real file wins over links to it (findings belong where the code lives); among
        links, the smallest path. Deciding after the walk makes this independent of the
        order in which directories happened to be popped.
        """
        winners: dict[str, _Candidate] = {}
        for candidate in self.candidates:
            best = winners.get(candidate.real)
            if best is None or (candidate.via_link, candidate.path) < (best.via_link, best.path):
                winners[candidate.real] = candidate
        files: list[SourceFile] = []
        skipped = [Skipped(display_path(item.path), item.reason) for item in self.skipped]
        for candidate in self.candidates:
            winner = winners[candidate.real]
            path = display_path(candidate.path)
            if winner is not candidate:
                skipped.append(Skipped(path, f"duplicate of {display_path(winner.path)}"))
            elif candidate.size > self.max_file_size:
                skipped.append(Skipped(path, _too_big_reason(candidate.size, self.max_file_size)))
            else:
                files.append(SourceFile(path, candidate.abspath, candidate.kinds, candidate.size))
        files.sort(key=lambda item: item.path)
        skipped.sort(key=lambda item: (item.path, item.reason))
        errors = sorted((ScanError(display_path(e.path), e.kind, e.message) for e in self.errors), key=lambda item: (item.path, item.kind, item.message))
        return Discovery(files=files, skipped=skipped, errors=errors)


def _discover_file(root_abs: str, size: int, max_file_size: int, globs: pathspec.GitIgnoreSpec | None) -> Discovery:
    """A file named explicitly is scanned even if ignore rules would have dropped it in a
    walk: the user asked for it by name (as git does for explicitly added paths)."""
    name = os.path.basename(root_abs)
    kinds = _classify(name, globs)
    if not kinds:
        return Discovery()
    if size > max_file_size:
        return Discovery(skipped=[Skipped(display_path(name), _too_big_reason(size, max_file_size))])
    return Discovery(files=[SourceFile(display_path(name), root_abs, kinds, size)])


def discover(
    root: str | os.PathLike[str],
    *,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    extra_globs: Sequence[str] = (),
) -> Discovery:
    """List the files under `root` that some analysis applies to.

    `exclude` holds gitwildmatch patterns relative to the root, applied whether or not
    gitignore is honoured. `extra_globs` marks files of kind "other" (rules that look at
    Dockerfiles, CMake files, shell scripts...).

    Raises OSError (e.g. FileNotFoundError) when the root itself cannot be stat'ed: a scan
    of nothing is a usage error for the caller to report, not a per-file error.
    """
    root_abs = os.path.abspath(os.fspath(root))
    root_stat = os.stat(root_abs)
    globs = _compiled_globs(tuple(extra_globs))
    if not stat.S_ISDIR(root_stat.st_mode):
        if not stat.S_ISREG(root_stat.st_mode):
            return Discovery()
        return _discover_file(root_abs, root_stat.st_size, max_file_size, globs)
    root_real = os.path.realpath(root_abs)
    walker = _Walker(
        root_abs=root_abs,
        root_real=root_real,
        exclude=_compile(exclude) if exclude else None,
        respect_gitignore=respect_gitignore,
        max_file_size=max_file_size,
        globs=globs,
        tracked=tracked_paths(root_abs) if respect_gitignore else None,
    )
    walker.run(_Dir(root_abs, "", root_real, walker.root_layers()))
    return walker.result()


def discover_paths(
    root: str | os.PathLike[str],
    paths: Sequence[str] | None,
    *,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    extra_globs: Sequence[str] = (),
) -> Discovery:
    """The walk of `root`, or, with `paths` (files and directories inside `root`, as
    pre-commit passes them), just those, with every path relative to `root` so that
    fingerprints and baselines match a whole-tree scan.

    `exclude` applies to files named explicitly too (ruff calls this force-exclude): a
    hook must not report files the project's configuration leaves out.
    """
    walk = functools.partial(discover, exclude=exclude, respect_gitignore=respect_gitignore, max_file_size=max_file_size, extra_globs=extra_globs)
    if not paths:
        return walk(root)
    root_abs = os.path.abspath(os.fspath(root))
    excluded = _compile(exclude) if exclude else None
    globs = _compiled_globs(tuple(extra_globs))
    files: dict[str, SourceFile] = {}
    skipped: dict[str, Skipped] = {}
    errors: dict[str, ScanError] = {}
    whole: Discovery | None = None
    for given in paths:
        given_abs = os.path.abspath(given)
        real_rel = os.path.relpath(given_abs, root_abs).replace(os.sep, "/")
        rel = display_path(real_rel)
        try:
            given_stat = os.stat(given_abs)
        except OSError as exc:
            errors[rel] = ScanError(rel, "unreadable", f"cannot read: {exc.strerror or type(exc).__name__}")
            continue
        if stat.S_ISDIR(given_stat.st_mode):
            # The walk of the whole root, filtered: the root's .gitignore files and
            # excludes apply below a directory named on the command line too.
            whole = whole or walk(root_abs)
            inside = "" if rel == "." else rel + "/"
            part = Discovery(
                files=[f for f in whole.files if f.path.startswith(inside)],
                skipped=[s for s in whole.skipped if s.path.startswith(inside)],
                errors=[e for e in whole.errors if e.path.startswith(inside)],
            )
            prefix = ""
        elif excluded is not None and excluded.match_file(real_rel):
            continue
        else:
            part = _discover_file(given_abs, given_stat.st_size, max_file_size, globs)
            prefix = display_path(real_rel[: -len(os.path.basename(given_abs))])
        for source in part.files:
            files.setdefault(prefix + source.path, SourceFile(prefix + source.path, source.abspath, source.kinds, source.size))
        for skip in part.skipped:
            skipped.setdefault(prefix + skip.path, Skipped(prefix + skip.path, skip.reason))
        for error in part.errors:
            errors.setdefault(prefix + error.path, ScanError(prefix + error.path, error.kind, error.message))
    return Discovery(
        files=[files[p] for p in sorted(files)],
        skipped=[skipped[p] for p in sorted(skipped) if p not in files],
        errors=[errors[p] for p in sorted(errors) if p not in files],
    )
