"""A work item's shares of hours, and the pricing of copies among them: what is written
once and reused (a helper for a missing op, one search-and-replace over configs) is priced
in full once and as a copy elsewhere, without a finding added ever lowering a total."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tpucheck.findings import Finding


@dataclass(frozen=True, slots=True)
class Share:
    """One finding's part of a work item, in hours, and what an hour of it weighs."""

    finding: Finding | None
    """None for a validation item."""
    low: float
    high: float
    weight: float
    workload: str | None = None
    """For a validation item: the workload it validates."""

    @property
    def cost(self) -> float:
        return (self.low + self.high) / 2 * self.weight


def keep_heaviest(shares: list[Share], copy: float, groups: list[list[list[int]]], at_most: float | None = None) -> list[Share]:
    """In each group of units (a unit: the positions of some shares), the heaviest unit
    keeps its price and every other costs a copy. "Heaviest" is taken per measure (low
    hours, high hours, cost), since one unit may lead on cost and another on hours
    (a blocker against a guarded major): each total is then (1 - copy) x max + copy x
    sum, which a finding added never lowers (the Hypothesis property in
    tests/test_score_properties.py). With `at_most`, the copies of a group together cost
    at most that many times its heaviest unit, per measure: min(copy x rest, at_most x
    max), which grows with every unit added as well."""
    out = list(shares)
    for group in groups:
        # An info finding's hours are not validated (Model.validation, judge/score.py):
        # were it to lead the hours, the validated hours of the unit it displaced would
        # fall. It keeps its own price and takes no part.
        units = [unit for unit in ([at for at in unit if not _is_info(shares[at])] for unit in group) if unit]
        if len(units) < 2:
            continue
        full = [max(range(len(units)), key=lambda u: (sum(measure(shares[at]) for at in units[u]), -u)) for measure in _MEASURES]
        factors = [copy, copy, copy]
        if at_most is not None:
            for m, (measure, keep) in enumerate(zip(_MEASURES, full, strict=True)):
                heaviest = sum(measure(shares[at]) for at in units[keep])
                rest = sum(measure(shares[at]) for u, unit in enumerate(units) if u != keep for at in unit)
                if rest > 0 and copy * rest > at_most * heaviest:
                    factors[m] = at_most * heaviest / rest
        for index, unit in enumerate(units):
            low, high, cost = (1.0 if index == keep else factors[m] for m, keep in enumerate(full))
            for at in unit:
                out[at] = _scaled(shares[at], low, high, cost)
    return out


_MEASURES: tuple[Callable[[Share], float], ...] = (lambda s: s.low, lambda s: s.high, lambda s: s.cost)
"""What "heaviest" is taken by, each apart: low hours, high hours, cost."""


def _is_info(share: Share) -> bool:
    return share.finding is not None and share.finding.severity == "info"


def _scaled(share: Share, low: float, high: float, cost: float) -> Share:
    """The share with its hours and its cost scaled apart: the weight carries the cost's
    factor, so cost = (low + high) / 2 x weight stays true."""
    hours = share.low * low + share.high * high
    weight = share.weight * cost * (share.low + share.high) / hours if hours > 0 else share.weight
    return Share(share.finding, share.low * low, share.high * high, weight, share.workload)


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PROGRAM = re.compile(r"\.(?:py|sh)$|^\$\{?[A-Za-z_]")


def command_of(line: str) -> str:
    """The command a launch-script line runs, without what varies between the copies of
    one launcher: leading `VAR=value` assignments, options and their values, numbers, and
    everything from the launched program on (`OMP_NUM_THREADS=4 python -m
    torch.distributed.launch --nproc_per_node=8 --master_port 18113 main.py --model r50`
    is `python torch.distributed.launch`). Twelve scripts that differ only there are one
    search-and-replace edit, as twelve `backend: nccl` configs are."""
    words: list[str] = []
    for token in line.split():
        if not words and _ASSIGNMENT.match(token):
            continue
        if _PROGRAM.search(token) or token == "\\":
            break
        if token.startswith("-") or token.replace(".", "").replace(",", "").isdigit():
            continue
        words.append(token)
    return " ".join(words)


def line_copies(
    shares: list[Share], at_most: float | None, config_suffixes: tuple[str, ...], skip: Callable[[Finding], bool], bucket: Callable[[Finding], str]
) -> list[Share]:
    """The same line of code in many files (a recipe's `scaler = GradScaler(...)` in each
    of 93 copied training scripts) is edited by hand a few times, then by search and
    replace: each file keeps its price, but the copies of one line together cost at most
    `at_most` times the heaviest file (keep_heaviest's cap). Config files have their own
    copies (`config_copies`); `skip` leaves out what is no edit (kernels, fallback-kept)."""
    if at_most is None:
        return shares
    files: dict[tuple[str, str, str], dict[str, list[int]]] = {}
    for at, share in enumerate(shares):
        finding = share.finding
        if finding is None or skip(finding) or (config_suffixes and finding.path.lower().endswith(config_suffixes)):
            continue
        line = " ".join(finding.snippet.split())
        if line:
            files.setdefault((finding.rule, bucket(finding), line), {}).setdefault(finding.path, []).append(at)
    return keep_heaviest(shares, 1.0, [list(per_file.values()) for per_file in files.values() if len(per_file) > 1], at_most)


# -- the keys of units priced once ----------------------------------------------------

_DISTRIBUTION_SUFFIX = re.compile(r"_(cu\d+|python)$")


def package_of(name: str) -> str:
    """One package under its import name and its distribution's (`spconv` and `spconv-cu120`,
    `flashinfer` and `flashinfer-python`): the top module, lowercased, `-` read as `_`,
    without a CUDA-version or `-python` suffix."""
    top = name.split(".")[0].lower().replace("-", "_")
    return _DISTRIBUTION_SUFFIX.sub("", top)


def op_name(detail: str) -> str:
    """One op under its every spelling: the last dotted part, lowercased, without
    underscores (`mmcv.ops.voxelize.Voxelization` and `mmcv.ops.voxelization`, `RoIAlign`
    and `roi_align`, `DynamicScatter` and `dynamic_scatter`: a module's class and its
    function run the same kernels, ported once)."""
    return detail.rpartition(".")[2].lower().replace("_", "")
