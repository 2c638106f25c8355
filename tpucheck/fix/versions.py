"""Torch versions: the newest one a project's manifests allow, so a fix that needs a newer
torch is not offered.

Only release numbers matter here (2.5, 2.6.0, 2.6.0+cu121), and only upper bounds: a
project that pins `torch==2.4.1` or `torch<2.6` cannot run `torch.accelerator.empty_cache`
(2.9), while `torch>=2.1` says nothing against it. The parser is small on purpose (no
dependency on `packaging`): what it cannot read, it leaves unbounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import total_ordering

__all__ = ["Version", "newest_allowed", "oldest_allowed"]


@total_ordering
class Version:
    """A release number, compared part by part (`2.10 > 2.9`), missing parts as 0."""

    __slots__ = ("parts",)

    def __init__(self, text: str) -> None:
        found = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
        if found is None:
            raise ValueError(f"not a version: {text!r}")
        self.parts = tuple(int(p) for p in found.group(1).split("."))

    def _key(self) -> tuple[int, ...]:
        parts = list(self.parts)
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return tuple(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return ".".join(map(str, self.parts))

    def __repr__(self) -> str:
        return f"Version({str(self)!r})"


_CLAUSE = re.compile(r"(===|==|~=|<=|<|!=|>=|>)\s*([0-9][0-9a-zA-Z.*+!-]*)")


def _upper_bound(spec: str) -> tuple[Version, bool] | None:
    """(bound, inclusive) of one requirement spec (`==2.4.1`, `<2.6,>=2.1`, `~=2.4.0`,
    conda's `2.4.*` or `=2.4`), or None when it has no upper bound."""
    spec = spec.split(";", 1)[0]
    bounds: list[tuple[Version, bool]] = []
    for operator, text in _CLAUSE.findall(spec):
        base = text.split("+", 1)[0]
        if operator in ("==", "===") and base.endswith(".*"):
            prefix = Version(base[:-2])
            bounds.append((Version(".".join(map(str, (*prefix.parts[:-1], prefix.parts[-1] + 1)))), False))
        elif operator in ("==", "===", "<="):
            bounds.append((Version(base), True))
        elif operator == "<":
            bounds.append((Version(base), False))
        elif operator == "~=":
            parts = Version(base).parts
            if len(parts) >= 2:
                bumped = (*parts[:-2], parts[-2] + 1)
                bounds.append((Version(".".join(map(str, bumped))), False))
    if not bounds and (conda := re.fullmatch(r"\s*=?\s*(\d+(?:\.\d+)*)(\.\*)?\s*", spec)):
        version = Version(conda.group(1))
        if conda.group(2) or spec.strip().startswith("="):
            parts = version.parts
            return Version(".".join(map(str, (*parts[:-1], parts[-1] + 1)))), False
        return version, True
    if not bounds:
        return None
    return min(bounds, key=lambda b: (b[0], b[1]))


def newest_allowed(specs: Iterable[str]) -> Version | None:
    """The newest torch release the specs allow: the lowest upper bound (an exclusive
    `<2.6` allows 2.5.x, reported as 2.5.999 so that 2.5 < it < 2.6). None: unbounded."""
    best: Version | None = None
    for spec in specs:
        bound = _upper_bound(spec)
        if bound is None:
            continue
        version, inclusive = bound
        if not inclusive:
            parts = list(version.parts)
            while len(parts) > 1 and parts[-1] == 0:
                parts.pop()
            if parts[-1] == 0:
                continue
            version = Version(".".join(map(str, (*parts[:-1], parts[-1] - 1, 999))))
        if best is None or version < best:
            best = version
    return best


def oldest_allowed(specs: Iterable[str]) -> Version | None:
    """The oldest torch release the specs say they support: the highest lower bound
    (`>=2.1`, `~=2.4.0`, `==2.4.1`, `>2.1` read as 2.1); None when none is given."""
    best: Version | None = None
    for spec in specs:
        for operator, text in _CLAUSE.findall(spec.split(";", 1)[0]):
            if operator not in (">=", ">", "==", "===", "~="):
                continue
            base = text.split("+", 1)[0].removesuffix(".*")
            try:
                version = Version(base)
            except ValueError:
                continue
            if best is None or version > best:
                best = version
    return best
