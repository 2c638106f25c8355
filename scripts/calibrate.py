#!/usr/bin/env python3
"""Scan the calibration repositories and print the judgement against the expected bands.

    python scripts/calibrate.py [--repos /work/repos] [--set scripts/calibration_set.json]
                                [--only nanoGPT --only mamba] [--target torchtpu]
                                [--scans DIR] [--reuse] [--markdown FILE] [--check]

Why: the score and effort are a model of work, and a model is only believable when it is
checked against cases whose answer is known from outside the tool (issue 11 point 6;
docs/calibration.md justifies every band). The copies are the public repositories at the
commits recorded in the set, laid out as <repos>/<owner>__<name> (never committed).

In band: the grade is one of the letters of the expected band ("A-B" means A or B), and
the geometric middle of the measured product effort range, sqrt(low * high), lies within
the expected effort band. The effort compared is the product's when the report gives
product and supporting effort apart, else the total (the table says which).

Exit status: 0, or with --check 1 when any repository is out of band; 2 when a copy is
missing or a scan failed (with --check), because then the set was not really checked.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_common import (
    DEFAULT_REPOS,
    DEFAULT_SET,
    Repo,
    ScanFailed,
    git_head,
    load_or_scan,
    load_set,
    select,
)

GRADES = "ABCDF"


def grade_band(band: str) -> set[str]:
    """'A-B' -> {'A', 'B'}; 'D' -> {'D'}; 'B-D' -> {'B', 'C', 'D'}."""
    parts = [p.strip().upper() for p in band.split("-") if p.strip()]
    if not parts or any(p not in GRADES for p in parts) or len(parts) > 2:
        raise ValueError(f"bad grade band {band!r} (want e.g. 'A' or 'A-B')")
    lo, hi = GRADES.index(parts[0]), GRADES.index(parts[-1])
    if lo > hi:
        lo, hi = hi, lo
    return set(GRADES[lo : hi + 1])


def effort_middle(low: float, high: float) -> float:
    """The geometric middle of a range (ranges are multiplicative: 'x to 3x')."""
    if low <= 0 or high <= 0:
        return (low + high) / 2
    return math.sqrt(low * high)


def _range(value: Any) -> tuple[float, float] | None:
    """A {low, high} mapping or [low, high] pair as floats, else None."""
    if isinstance(value, dict) and "low" in value and "high" in value:
        return float(value["low"]), float(value["high"])
    if isinstance(value, (list, tuple)) and len(value) == 2:
        try:
            return float(value[0]), float(value[1])
        except (TypeError, ValueError):
            return None
    return None


# Where a report may keep product effort. The score model is being rewritten; the first
# shape that is present wins, and the table says when only the total was found.
_PRODUCT_PATHS: tuple[tuple[str, ...], ...] = (
    ("effort_hours", "product"),
    ("product_effort_hours",),
    ("effort", "product"),
    ("effort_product_hours",),
)
_SUPPORT_PATHS: tuple[tuple[str, ...], ...] = (
    ("effort_hours", "supporting"),
    ("supporting_effort_hours",),
    ("effort", "supporting"),
    ("effort_supporting_hours",),
)


def _dig(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    cur: Any = data
    for key in path:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return cur


def _first_range(summary: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> tuple[float, float] | None:
    for path in paths:
        found = _range(_dig(summary, path))
        if found:
            return found
    return None


@dataclass
class Measured:
    score: float
    grade: str
    effort: tuple[float, float]
    effort_is_product: bool
    supporting: tuple[float, float] | None
    training: float | None
    inference: float | None
    target: str | None
    findings: int
    blockers: int


def measure(report: dict[str, Any]) -> Measured:
    """The numbers calibration compares, read from a JSON report."""
    s = report["summary"]
    product = _first_range(s, _PRODUCT_PATHS)
    if product is None and "supporting_effort_hours" in s:
        product = _range(s.get("effort_hours"))  # schema 1.2: effort_hours is the product's
    total = _range(s.get("effort_hours")) or _range(s.get("effort")) or (math.nan, math.nan)
    target = s.get("target") or report.get("target")
    if isinstance(target, dict):
        target = target.get("name") or target.get("id")
    return Measured(
        score=float(s["score"]),
        grade=str(s["grade"]),
        effort=product or total,
        effort_is_product=product is not None,
        supporting=_first_range(s, _SUPPORT_PATHS),
        training=s.get("training_score"),
        inference=s.get("inference_score"),
        target=target,
        findings=int(s.get("findings", 0)),
        blockers=int((s.get("by_severity") or {}).get("blocker", 0)),
    )


@dataclass
class Verdict:
    grade_ok: bool
    effort_ok: bool

    @property
    def in_band(self) -> bool:
        return self.grade_ok and self.effort_ok


def judge(repo: Repo, m: Measured) -> Verdict:
    grade_ok = m.grade.upper() in grade_band(repo.grade)
    if repo.effort is None or math.isnan(m.effort[0]):
        effort_ok = repo.effort is None
    else:
        mid = effort_middle(*m.effort)
        effort_ok = repo.effort[0] <= mid <= repo.effort[1]
    return Verdict(grade_ok, effort_ok)


def _hours(r: tuple[float, float] | None) -> str:
    if r is None or math.isnan(r[0]):
        return "-"
    return f"{r[0]:g}-{r[1]:g}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{float(x):.1f}"


@dataclass
class Row:
    repo: Repo
    measured: Measured | None
    verdict: Verdict | None
    error: str | None
    seconds: float | None
    commit_note: str = ""


def text_table(rows: list[Row]) -> str:
    head = (
        f"{'repo':40} {'kind':12} {'exp':4} {'score':>5} {'gr':2} {'train':>5} {'infer':>5} "
        f"{'exp effort h':>12} {'effort h':>13} {'support h':>11} {'in band':8}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.measured is None or r.verdict is None:
            lines.append(f"{r.repo.repo:40} {r.repo.kind:12} {r.repo.grade:4} ERROR {r.error}")
            continue
        m, v = r.measured, r.verdict
        mark = "yes" if v.in_band else "NO (" + ",".join(
            w for w, ok in (("grade", v.grade_ok), ("effort", v.effort_ok)) if not ok
        ) + ")"
        eff = _hours(m.effort) + ("" if m.effort_is_product else "*")
        lines.append(
            f"{r.repo.repo:40} {r.repo.kind:12} {r.repo.grade:4} {m.score:5.1f} {m.grade:2} "
            f"{_num(m.training):>5} {_num(m.inference):>5} {_hours(r.repo.effort):>12} "
            f"{eff:>13} {_hours(m.supporting):>11} {mark}{r.commit_note}"
        )
    return "\n".join(lines)


def markdown_table(rows: list[Row]) -> str:
    """The 'Measured' table of docs/calibration.md."""
    out = [
        "| repo | expected grade | score | grade | training / inference | expected effort (h) | effort (h) | in band? |",
        "|---|---|---:|---|---|---|---|---|",
    ]
    for r in rows:
        if r.measured is None or r.verdict is None:
            out.append(f"| {r.repo.repo} | {r.repo.grade} | - | - | - | {_hours(r.repo.effort)} | - | error: {r.error} |")
            continue
        m, v = r.measured, r.verdict
        eff = _hours(m.effort) + ("" if m.effort_is_product else " (total)")
        why = "" if v.in_band else " (" + ", ".join(
            w for w, ok in (("grade", v.grade_ok), ("effort", v.effort_ok)) if not ok
        ) + ")"
        out.append(
            f"| {r.repo.repo} | {r.repo.grade} | {m.score:.1f} | {m.grade} | "
            f"{_num(m.training)} / {_num(m.inference)} | {_hours(r.repo.effort)} | {eff} | "
            f"{'yes' if v.in_band else 'no'}{why} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", type=Path, default=DEFAULT_REPOS, help="folder holding <owner>__<name> copies")
    ap.add_argument("--set", dest="set_path", type=Path, default=DEFAULT_SET, help="calibration set (JSON)")
    ap.add_argument("--only", action="append", help="only this repository (owner/name or name); repeatable")
    ap.add_argument("--target", help="pass --target to the scan (default: the tool's default)")
    ap.add_argument("--jobs", type=int, help="worker processes per scan")
    ap.add_argument("--tpucheck", help="command that runs tpucheck (default: this Python's -m tpucheck)")
    ap.add_argument("--scans", type=Path, help="keep the JSON reports here (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="read reports already in --scans instead of scanning")
    ap.add_argument("--cache", action="store_true", help="scan with the analysis cache (re-judging after a change to the judgement's constants)")
    ap.add_argument("--markdown", type=Path, help="also write the Markdown 'Measured' table to this file")
    ap.add_argument("--check", action="store_true", help="exit 1 when any repository is out of band")
    args = ap.parse_args(argv)
    if args.reuse and not args.scans:
        ap.error("--reuse needs --scans")

    cset = load_set(args.set_path)
    repos = select(cset.repos, args.only)
    if not repos:
        ap.error("no repository of the set matches --only")
    scans_dir = args.scans or Path(tempfile.mkdtemp(prefix="tpucheck-calibrate-"))

    rows: list[Row] = []
    for repo in repos:
        print(f"{'reading' if args.reuse else 'scanning'} {repo.repo} ...", file=sys.stderr, flush=True)
        note = ""
        head = git_head(args.repos / repo.dirname)
        if head and repo.commit and head != repo.commit:
            note = f"  [copy at {head[:10]}, set says {repo.commit[:10]}]"
        try:
            report, took = load_or_scan(
                repo, args.repos, scans_dir, reuse=args.reuse, tpucheck=args.tpucheck,
                target=args.target, jobs=args.jobs, cache=args.cache,
            )
            m = measure(report)
            rows.append(Row(repo, m, judge(repo, m), None, took, note))
        except (ScanFailed, KeyError, ValueError, OSError) as exc:
            rows.append(Row(repo, None, None, str(exc), None, note))

    targets = sorted({r.measured.target for r in rows if r.measured and r.measured.target})
    print(f"target: {', '.join(targets) if targets else 'not stated in the reports (tool default)'}")
    print(text_table(rows))
    if any(r.measured and not r.measured.effort_is_product for r in rows):
        print("* total effort: the report gives no product effort apart")
    done = [r for r in rows if r.verdict]
    inside = sum(1 for r in done if r.verdict and r.verdict.in_band)
    grade_ok = sum(1 for r in done if r.verdict and r.verdict.grade_ok)
    effort_ok = sum(1 for r in done if r.verdict and r.verdict.effort_ok)
    print(
        f"in band: {inside}/{len(rows)} (grade {grade_ok}, effort {effort_ok}); "
        f"errors: {len(rows) - len(done)}; reports in {scans_dir}"
    )
    secs = [r.seconds for r in rows if r.seconds is not None]
    if secs:
        print(f"scan time: {sum(secs):.0f} s")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown_table(rows) + "\n", encoding="utf-8")
    if args.check:
        if len(done) < len(rows):
            return 2
        if inside < len(rows):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
