"""Name normalization and glob tables shared by every analyzer."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Generic, TypeVar

T = TypeVar("T")

_GLOB = re.compile(r"[*?\[]")
_SEPARATORS = re.compile(r"[-_.]+")


def normalize_package(name: str) -> str:
    """PEP 503: `Flash_Attn` and `flash-attn` are one package."""
    return _SEPARATORS.sub("-", name).lower()


def path_matches(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether a '/'-separated relative path matches a rule's path globs: a pattern
    without a slash matches the file name at any depth, as in .gitignore."""
    name = path.rsplit("/", 1)[-1]
    return any(fnmatchcase(path if "/" in p else name, p.lstrip("/")) for p in patterns)


class GlobTable(Generic[T]):
    """Maps a name to every payload whose pattern matches it, with a per-name cache.

    Exact patterns are a dict lookup; globs are tried only when their literal prefix
    matches. With `prefixes=True` a pattern also matches names below it (`apex` matches
    `apex.optimizers`), which is how module patterns behave.
    """

    def __init__(self, *, prefixes: bool = False) -> None:
        self._exact: dict[str, list[T]] = {}
        self._globs: list[tuple[str, str, T]] = []
        self._prefixes = prefixes
        self._cache: dict[str, tuple[T, ...]] = {}

    def add(self, pattern: str, payload: T) -> None:
        self._cache.clear()
        if _GLOB.search(pattern):
            self._globs.append((_GLOB.split(pattern, 1)[0], pattern, payload))
        else:
            self._exact.setdefault(pattern, []).append(payload)

    def __bool__(self) -> bool:
        return bool(self._exact or self._globs)

    def lookup(self, name: str) -> tuple[T, ...]:
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        found: list[T] = list(self._exact.get(name, ()))
        if self._prefixes:
            parts = name.split(".")
            for end in range(len(parts) - 1, 0, -1):
                found.extend(self._exact.get(".".join(parts[:end]), ()))
        for prefix, pattern, payload in self._globs:
            if name.startswith(prefix) and (
                fnmatchcase(name, pattern) or (self._prefixes and fnmatchcase(name, pattern + ".*"))
            ):
                found.append(payload)
        result = tuple(found)
        if len(self._cache) < 100_000:
            self._cache[name] = result
        return result
