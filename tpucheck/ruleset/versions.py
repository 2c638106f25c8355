"""Release numbers and the ranges requirement specifiers allow: what a `dependency`
matcher's `outside` range is tested against, and what `tpucheck fix` asks of a pin.

Only release numbers matter (2.5, 2.6.0, 2.6.0+cu121): a spec is read as the interval of
releases it allows (`==2.4.0`, `>=2.1,<2.6`, `~=2.4.0`, `==2.4.*`, conda's `=2.4`, `2.4.*`
and `=2.4.0=build`). `!=` only removes single points and is ignored, so an interval can only
be wider than the truth: a pin is said to miss a range only when it surely does. The parser
is small on purpose (no dependency on `packaging`): what it cannot read, it leaves
unbounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

__all__ = ["Bound", "Interval", "Version", "VersionRange", "interval_of"]


@total_ordering
class Version:
    """A release number, compared part by part (`2.10 > 2.9`), missing parts as 0."""

    __slots__ = ("parts",)

    def __init__(self, text: str) -> None:
        found = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
        if found is None:
            raise ValueError(f"not a version: {text!r}")
        self.parts = tuple(int(p) for p in found.group(1).split("."))

    @classmethod
    def of(cls, parts: tuple[int, ...]) -> Version:
        return cls(".".join(map(str, parts)))

    def _key(self) -> tuple[int, ...]:
        parts = list(self.parts)
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return tuple(parts)

    def bumped(self) -> Version:
        """The next release at this precision: 2.4 -> 2.5, 2.4.1 -> 2.4.2."""
        return Version.of((*self.parts[:-1], self.parts[-1] + 1))

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


@dataclass(frozen=True, slots=True)
class Bound:
    version: Version
    inclusive: bool


@dataclass(frozen=True, slots=True)
class Interval:
    """The releases a spec allows: between `lower` and `upper` (None: unbounded)."""

    lower: Bound | None = None
    upper: Bound | None = None

    def meet(self, other: Interval) -> Interval:
        return Interval(_tighter(self.lower, other.lower, low=True), _tighter(self.upper, other.upper, low=False))

    @property
    def empty(self) -> bool:
        if self.lower is None or self.upper is None:
            return False
        if self.lower.version == self.upper.version:
            return not (self.lower.inclusive and self.upper.inclusive)
        return self.upper.version < self.lower.version


def _tighter(a: Bound | None, b: Bound | None, *, low: bool) -> Bound | None:
    if a is None or b is None:
        return a or b
    if a.version == b.version:
        return Bound(a.version, a.inclusive and b.inclusive)
    if low:
        return a if b.version < a.version else b
    return a if a.version < b.version else b


_CLAUSE = re.compile(r"(===|==|~=|<=|<|!=|>=|>|=)?\s*(\d[0-9a-zA-Z.*+!-]*)")


def _clause(operator: str, text: str) -> Interval:
    base = text.split("+", 1)[0].rstrip(".")
    wildcard = base.endswith("*")
    version = Version(base.rstrip(".*") or "0")
    if operator in ("", "=") or (operator in ("==", "===") and wildcard):
        # conda's `=2.4` and a bare `2.4.*` allow every 2.4.x; pip's `==2.4.*` too
        return Interval(Bound(version, True), Bound(version.bumped(), False))
    if operator in ("==", "==="):
        return Interval(Bound(version, True), Bound(version, True))
    if operator == "~=":
        parts = version.parts
        upper = Version.of(parts[:-1]).bumped() if len(parts) >= 2 else None
        return Interval(Bound(version, True), Bound(upper, False) if upper else None)
    if operator in (">=", ">"):
        return Interval(lower=Bound(version, operator == ">="))
    if operator in ("<=", "<"):
        return Interval(upper=Bound(version, operator == "<="))
    return Interval()  # `!=`: one point removed


def interval_of(spec: str) -> Interval | None:
    """The releases a requirement spec allows (pip or conda), or None when it names no
    version (an unpinned name, a URL, a path)."""
    spec = spec.split(";", 1)[0]
    spec = re.sub(r"^\s*\[[^\]]*\]", "", spec).strip()  # extras: `[cuda]>=2.1`
    spec = re.sub(r"(===|==|~=|<=|>=|!=|<|>|=)\s+", r"\1", spec)  # `>= 2.1`
    if not spec or spec.startswith("@") or "://" in spec:
        return None
    if spec.startswith("=") and not spec.startswith(("==", "===")):
        spec = spec.split("=", 2)[1] if spec.count("=") >= 2 else spec  # conda `=2.4.0=build`
        spec = "=" + spec.lstrip("=")
    interval = Interval()
    found = False
    for part in re.split(r"[,\s]+", spec):
        if not part:
            continue
        clause = _CLAUSE.fullmatch(part)
        if clause is None:
            continue
        found = True
        interval = interval.meet(_clause(clause.group(1) or "", clause.group(2)))
    return interval if found else None


@dataclass(frozen=True, slots=True)
class VersionRange:
    """A supported range (`>=2.11.0,<=2.15.0`), as written and as an interval."""

    text: str
    interval: Interval

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        interval = interval_of(text)
        if interval is None or interval.empty or (interval.lower is None and interval.upper is None):
            raise ValueError(f"not a version range: {text!r}")
        return cls(text, interval)

    def missed_by(self, spec: str) -> bool:
        """Whether a requirement spec allows no release inside this range."""
        allowed = interval_of(spec)
        return allowed is not None and allowed.meet(self.interval).empty
