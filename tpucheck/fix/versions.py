"""Torch versions: the newest one a project's manifests allow, so a fix that needs a newer
torch is not offered.

Only release numbers matter here (2.5, 2.6.0, 2.6.0+cu121), and only upper bounds: a
project that pins `torch==2.4.1` or `torch<2.6` cannot run `torch.accelerator.empty_cache`
(2.9), while `torch>=2.1` says nothing against it. The parser is small on purpose (no
dependency on `packaging`): what it cannot read, it leaves unbounded.
"""

from __future__ import annotations

from collections.abc import Iterable

from tpucheck.ruleset.versions import Version, interval_of

__all__ = ["Version", "newest_allowed", "oldest_allowed"]


def _upper_bound(spec: str) -> tuple[Version, bool] | None:
    """(bound, inclusive) of one requirement spec (`==2.4.1`, `<2.6,>=2.1`, `~=2.4.0`,
    conda's `2.4.*` or `=2.4`), or None when it has no upper bound."""
    allowed = interval_of(spec)
    if allowed is None or allowed.upper is None:
        return None
    return allowed.upper.version, allowed.upper.inclusive


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
            version = Version.of((*parts[:-1], parts[-1] - 1, 999))
        if best is None or version < best:
            best = version
    return best


def oldest_allowed(specs: Iterable[str]) -> Version | None:
    """The oldest torch release the specs say they support: the highest lower bound
    (`>=2.1`, `~=2.4.0`, `==2.4.1`, `>2.1` read as 2.1); None when none is given."""
    best: Version | None = None
    for spec in specs:
        allowed = interval_of(spec)
        if allowed is None or allowed.lower is None:
            continue
        version = allowed.lower.version
        if best is None or best < version:
            best = version
    return best
